//! The targets file (SPEC §7, targets): TOML, read by `serve` and
//! `deliver`, holding where firings go and the secrets to get there (never
//! stored in the ledger).
//!
//! ```toml
//! lease = "60s"            # optional: how long a claimed firing is held
//! poll = "1s"              # optional: how often the ledger is asked
//!
//! [[target]]
//! name = "hook"
//! kind = "webhook"
//! url = "http://127.0.0.1:9000/gapless"
//! secret = "..."           # optional: signs the body
//! kinds = ["complete"]     # the default
//! max_attempts = 10        # the default
//! backoff = { base = "1s", max = "5m" }
//! timeout = "10s"          # one HTTP request
//!
//! [[target]]
//! name = "airflow"
//! kind = "airflow"
//! url = "http://127.0.0.1:8080"
//! username = "admin"       # with password; or token = "..."
//! password = "..."
//! asset_uri = "gapless://orders/hourly"   # or dag_id = "..."
//! ```
//!
//! Every error is one line naming the file, the entry, the field and what
//! is accepted.

use std::path::Path;
use std::time::Duration;

use gapless_core::FiringKind;

/// The environment variable naming the targets file when `--targets-file`
/// is not given.
pub const TARGETS_ENV: &str = "GAPLESS_TARGETS_FILE";

/// A bad targets file: one line naming the file, the entry and the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetsError(pub String);

impl std::fmt::Display for TargetsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TargetsError {}

/// The targets and the deliverer's settings.
#[derive(Debug, Clone)]
pub struct Targets {
    /// By name, in file order.
    pub targets: Vec<Target>,
    /// How long a claimed firing is held before another deliverer may take
    /// it (default 60 s; at least twice every target's timeout).
    pub lease: Duration,
    /// How often an idle deliverer asks the ledger for due firings
    /// (default 1 s).
    pub poll: Duration,
}

/// Where one rule's firings go.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its name, as rules name it.
    pub name: String,
    /// The firing kinds it takes; others are marked delivered unsent.
    pub kinds: Vec<FiringKind>,
    /// Attempts and backoff.
    pub retry: Retry,
    /// The longest one HTTP request to it may take (default 10 s).
    pub timeout: Duration,
    /// How it is reached.
    pub kind: TargetKind,
}

/// The kinds of target.
#[derive(Debug, Clone)]
pub enum TargetKind {
    /// An HTTP endpoint taking the firing JSON.
    Webhook(Webhook),
    /// Apache Airflow's REST API.
    Airflow(Airflow),
}

/// `kind = "webhook"`.
#[derive(Clone)]
pub struct Webhook {
    /// Where the firing is POSTed.
    pub url: String,
    /// The key of `X-Gapless-Signature`, if any.
    pub secret: Option<String>,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("url", &crate::send::site(&self.url))
            .field("secret", &self.secret.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

/// `kind = "airflow"`.
#[derive(Clone)]
pub struct Airflow {
    /// Airflow's base URL (no trailing slash).
    pub url: String,
    /// How to authenticate.
    pub auth: AirflowAuth,
    /// What a firing becomes.
    pub to: AirflowTo,
}

impl std::fmt::Debug for Airflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Airflow")
            .field("url", &crate::send::site(&self.url))
            .field("auth", &self.auth)
            .field("to", &self.to)
            .finish()
    }
}

/// How the deliverer authenticates to Airflow.
#[derive(Clone)]
pub enum AirflowAuth {
    /// A JWT from `POST /auth/token`, asked again on a 401.
    Password {
        /// The user.
        username: String,
        /// Their password.
        password: String,
    },
    /// A fixed bearer token.
    Token(String),
}

impl std::fmt::Debug for AirflowAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AirflowAuth::Password { username, .. } => f
                .debug_struct("Password")
                .field("username", username)
                .field("password", &"<hidden>")
                .finish(),
            AirflowAuth::Token(_) => f.write_str("Token(<hidden>)"),
        }
    }
}

/// What a firing becomes in Airflow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AirflowTo {
    /// An asset event of the asset with this URI.
    Asset(String),
    /// A run of this DAG.
    Dag(String),
}

/// Attempts and exponential backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Attempts before a firing is `failed` (default 10).
    pub max_attempts: u32,
    /// The wait after the first failed attempt (default 1 s); doubled after
    /// each further one.
    pub base: Duration,
    /// The longest wait (default 5 min).
    pub max: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            max_attempts: 10,
            base: Duration::from_secs(1),
            max: Duration::from_secs(300),
        }
    }
}

impl Retry {
    /// The wait before the next attempt after `attempts` failed ones (1 or
    /// more): `base * 2^(attempts - 1)`, at most `max`.
    pub fn backoff(&self, attempts: u32) -> Duration {
        let doublings = attempts.saturating_sub(1);
        if doublings >= 32 {
            return self.max;
        }
        self.base
            .checked_mul(1 << doublings)
            .map_or(self.max, |d| d.min(self.max))
    }
}

const TOP_FIELDS: [&str; 3] = ["lease", "poll", "target"];
const FIELDS: [&str; 13] = [
    "name",
    "kind",
    "kinds",
    "max_attempts",
    "backoff",
    "timeout",
    "url",
    "secret",
    "username",
    "password",
    "token",
    "asset_uri",
    "dag_id",
];

impl Targets {
    /// Read and check the targets file at `path`.
    ///
    /// # Errors
    ///
    /// An unreadable file, or the first problem in it, one line naming the
    /// file, the entry and the field.
    pub fn load(path: &Path) -> Result<Targets, TargetsError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            TargetsError(format!("cannot read targets file {}: {e}", path.display()))
        })?;
        Targets::parse(&text).map_err(|m| TargetsError(format!("{}: {m}", path.display())))
    }

    /// Check the text of a targets file.
    ///
    /// # Errors
    ///
    /// The first problem, naming the entry and the field.
    pub fn parse(text: &str) -> Result<Targets, String> {
        let doc: toml::Table = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let message = e.message().trim().replace('\n', "; ");
            match line {
                Some(n) => format!("invalid TOML at line {n}: {message}"),
                None => format!("invalid TOML: {message}"),
            }
        })?;
        if let Some(k) = doc.keys().find(|k| !TOP_FIELDS.contains(&k.as_str())) {
            return Err(format!(
                "unknown key {k:?}: the file holds lease, poll and [[target]] entries"
            ));
        }
        let lease = match doc.get("lease") {
            Some(v) => duration("lease", v)?,
            None => Duration::from_secs(60),
        };
        let poll = match doc.get("poll") {
            Some(v) => duration("poll", v)?,
            None => Duration::from_secs(1),
        };
        let entries = match doc.get("target") {
            None => Vec::new(),
            Some(toml::Value::Array(items)) => items.clone(),
            Some(other) => {
                return Err(format!(
                    "target: expected [[target]] entries, found {}",
                    other.type_str()
                ))
            }
        };
        let mut targets: Vec<Target> = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let t = target(i, entry)?;
            if targets.iter().any(|o| o.name == t.name) {
                return Err(format!(
                    "target {} ({:?}): name: another target is named {:?}: names are unique",
                    i + 1,
                    t.name,
                    t.name
                ));
            }
            if lease < 2 * t.timeout {
                return Err(format!(
                    "lease: {} is shorter than twice target {:?}'s timeout ({}): a lease must \
                     outlast a delivery attempt",
                    show(lease),
                    t.name,
                    show(t.timeout)
                ));
            }
            targets.push(t);
        }
        Ok(Targets {
            targets,
            lease,
            poll,
        })
    }

    /// The target named `name`.
    pub fn get(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.name == name)
    }
}

/// `d` as the short text form.
fn show(d: Duration) -> String {
    gapless_core::Duration::from_micros(i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .map_or_else(|_| format!("{d:?}"), |d| d.to_string())
}

/// A positive fixed duration: `30s`, `PT1M`.
fn duration(field: &str, v: &toml::Value) -> Result<Duration, String> {
    let toml::Value::String(s) = v else {
        return Err(format!(
            "{field}: expected a duration such as \"30s\", found {}",
            v.type_str()
        ));
    };
    let d = gapless_core::Duration::parse(s).map_err(|e| format!("{field}: {e}"))?;
    let us = d.fixed_micros().ok_or_else(|| {
        format!("{field}: {s:?} has months or years: give a fixed length such as \"30s\"")
    })?;
    Ok(Duration::from_micros(u64::try_from(us).unwrap_or(0)))
}

/// Entry `i` (from 0) of `[[target]]`.
fn target(i: usize, entry: &toml::Value) -> Result<Target, String> {
    let toml::Value::Table(fields) = entry else {
        return Err(format!(
            "target {}: expected a table, found {}",
            i + 1,
            entry.type_str()
        ));
    };
    let name = match fields.get("name") {
        Some(toml::Value::String(n)) => n.clone(),
        Some(v) => {
            return Err(format!(
                "target {}: name: expected a string, found {}",
                i + 1,
                v.type_str()
            ))
        }
        None => {
            return Err(format!(
                "target {}: name is missing: give the name rules use in --target",
                i + 1
            ))
        }
    };
    let which = format!("target {} ({name:?})", i + 1);
    gapless_core::validate_rule_name(&name).map_err(|e| format!("{which}: name: {e}"))?;
    if let Some(k) = fields.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "{which}: unknown field {k:?}: the fields are {}",
            FIELDS.join(", ")
        ));
    }
    let text = |field: &str| -> Result<Option<String>, String> {
        match fields.get(field) {
            None => Ok(None),
            Some(toml::Value::String(s)) if s.is_empty() => {
                Err(format!("{which}: {field}: must not be empty"))
            }
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(format!(
                "{which}: {field}: expected a string, found {}",
                v.type_str()
            )),
        }
    };
    let kinds = match fields.get("kinds") {
        None => vec![FiringKind::Complete],
        Some(toml::Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|v| {
                let s = v.as_str().unwrap_or_default();
                FiringKind::ALL
                    .into_iter()
                    .find(|k| k.as_str() == s)
                    .ok_or_else(|| {
                        format!(
                            "{which}: kinds: unknown firing kind {v}: use complete, incomplete \
                             or late"
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(v) => {
            return Err(format!(
                "{which}: kinds: expected a non-empty array such as [\"complete\", \"late\"], \
                 found {}",
                if v.is_array() { "[]" } else { v.type_str() }
            ))
        }
    };
    let mut retry = Retry::default();
    match fields.get("max_attempts") {
        None => {}
        Some(toml::Value::Integer(n)) if (1..=1000).contains(n) => {
            retry.max_attempts = u32::try_from(*n).expect("in range");
        }
        Some(v) => {
            return Err(format!(
                "{which}: max_attempts: expected a whole number from 1 to 1000, found {v}"
            ))
        }
    }
    match fields.get("backoff") {
        None => {}
        Some(toml::Value::Table(b)) => {
            if let Some(k) = b.keys().find(|k| *k != "base" && *k != "max") {
                return Err(format!(
                    "{which}: backoff: unknown field {k:?}: give base and max, such as \
                     {{ base = \"1s\", max = \"5m\" }}"
                ));
            }
            if let Some(v) = b.get("base") {
                retry.base = duration(&format!("{which}: backoff.base"), v)?;
            }
            if let Some(v) = b.get("max") {
                retry.max = duration(&format!("{which}: backoff.max"), v)?;
            }
            if retry.max < retry.base {
                return Err(format!(
                    "{which}: backoff: max ({}) is shorter than base ({})",
                    show(retry.max),
                    show(retry.base)
                ));
            }
        }
        Some(v) => {
            return Err(format!(
                "{which}: backoff: expected a table such as {{ base = \"1s\", max = \"5m\" }}, \
                 found {}",
                v.type_str()
            ))
        }
    }
    let timeout = match fields.get("timeout") {
        Some(v) => duration(&format!("{which}: timeout"), v)?,
        None => Duration::from_secs(10),
    };
    let url = |field: &str| -> Result<String, String> {
        let u = text(field)?.ok_or_else(|| format!("{which}: {field} is missing"))?;
        if u.starts_with("https://") {
            return Err(format!(
                "{which}: {field}: {u:?}: this build speaks plain http:// only (put a \
                 TLS-terminating proxy in front)"
            ));
        }
        if !u.starts_with("http://") || u.len() <= "http://".len() {
            return Err(format!("{which}: {field}: {u:?} is not an http:// URL"));
        }
        Ok(u.trim_end_matches('/').to_string())
    };
    let only = |allowed: &[&str], kind: &str| -> Result<(), String> {
        let specific = [
            "secret",
            "username",
            "password",
            "token",
            "asset_uri",
            "dag_id",
        ];
        match specific
            .iter()
            .find(|f| fields.contains_key(**f) && !allowed.contains(f))
        {
            Some(f) => Err(format!(
                "{which}: {f}: not a field of a {kind} target (its fields: url, {})",
                allowed.join(", ")
            )),
            None => Ok(()),
        }
    };
    let kind = match text("kind")?.as_deref() {
        Some("webhook") => {
            only(&["secret"], "webhook")?;
            TargetKind::Webhook(Webhook {
                url: url("url")?,
                secret: text("secret")?,
            })
        }
        Some("airflow") => {
            only(
                &["username", "password", "token", "asset_uri", "dag_id"],
                "airflow",
            )?;
            let auth = match (text("username")?, text("password")?, text("token")?) {
                (Some(username), Some(password), None) => {
                    AirflowAuth::Password { username, password }
                }
                (None, None, Some(token)) => AirflowAuth::Token(token),
                (None, None, None) => {
                    return Err(format!(
                        "{which}: give username and password, or token, to authenticate to \
                         Airflow"
                    ))
                }
                (_, _, Some(_)) => {
                    return Err(format!(
                        "{which}: token: give either token or username and password, not both"
                    ))
                }
                (Some(_), None, None) => {
                    return Err(format!("{which}: password is missing (username is given)"))
                }
                (None, Some(_), None) => {
                    return Err(format!("{which}: username is missing (password is given)"))
                }
            };
            let to = match (text("asset_uri")?, text("dag_id")?) {
                (Some(uri), None) => AirflowTo::Asset(uri),
                (None, Some(dag)) => AirflowTo::Dag(dag),
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "{which}: give exactly one of asset_uri and dag_id, not both"
                    ))
                }
                (None, None) => {
                    return Err(format!(
                        "{which}: give exactly one of asset_uri (an asset event per firing) and \
                         dag_id (a DAG run per firing)"
                    ))
                }
            };
            TargetKind::Airflow(Airflow {
                url: url("url")?,
                auth,
                to,
            })
        }
        Some(other) => {
            return Err(format!(
                "{which}: kind: unknown kind {other:?}: use webhook or airflow"
            ))
        }
        None => return Err(format!("{which}: kind is missing: use webhook or airflow")),
    };
    Ok(Target {
        name,
        kinds,
        retry,
        timeout,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Targets::parse(text).expect_err(text)
    }

    #[test]
    fn defaults_and_both_kinds() {
        let t = Targets::parse(
            r#"
            poll = "200ms"
            [[target]]
            name = "hook"
            kind = "webhook"
            url = "http://127.0.0.1:9/x/"
            secret = "s3"
            [[target]]
            name = "af"
            kind = "airflow"
            url = "http://127.0.0.1:8080"
            token = "t"
            dag_id = "hourly"
            kinds = ["complete", "late"]
            max_attempts = 3
            backoff = { base = "2s", max = "1m" }
            timeout = "5s"
            "#,
        )
        .unwrap();
        assert_eq!(t.lease, Duration::from_secs(60));
        assert_eq!(t.poll, Duration::from_millis(200));
        let hook = t.get("hook").unwrap();
        assert_eq!(hook.kinds, [FiringKind::Complete]);
        assert_eq!(hook.retry, Retry::default());
        assert_eq!(hook.timeout, Duration::from_secs(10));
        match &hook.kind {
            TargetKind::Webhook(w) => {
                assert_eq!(w.url, "http://127.0.0.1:9/x");
                assert_eq!(w.secret.as_deref(), Some("s3"));
                assert!(!format!("{w:?}").contains("s3"));
            }
            other => panic!("{other:?}"),
        }
        let af = t.get("af").unwrap();
        assert_eq!(af.kinds, [FiringKind::Complete, FiringKind::Late]);
        assert_eq!(af.retry.max_attempts, 3);
        assert_eq!(af.retry.base, Duration::from_secs(2));
        match &af.kind {
            TargetKind::Airflow(a) => {
                assert_eq!(a.to, AirflowTo::Dag("hourly".into()));
                assert!(matches!(a.auth, AirflowAuth::Token(_)));
            }
            other => panic!("{other:?}"),
        }
        assert!(Targets::parse("").unwrap().targets.is_empty());
    }

    #[test]
    fn backoff_doubles_up_to_max() {
        let r = Retry {
            max_attempts: 10,
            base: Duration::from_secs(1),
            max: Duration::from_secs(10),
        };
        let waits: Vec<u64> = (1..=6).map(|n| r.backoff(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 10, 10]);
        assert_eq!(r.backoff(1000), Duration::from_secs(10));
    }

    #[test]
    fn errors_name_the_entry_the_field_and_what_is_accepted() {
        let hook = "[[target]]\nname = \"hook\"\nkind = \"webhook\"\nurl = \"http://h\"\n";
        let cases = [
            (
                "[[target]]\nname = \"hook\"\nkind = \"webhok\"\n".to_string(),
                "target 1 (\"hook\"): kind: unknown kind \"webhok\": use webhook or airflow",
            ),
            (
                "[[target]]\nkind = \"webhook\"\n".into(),
                "target 1: name is missing",
            ),
            (
                format!("{hook}kinds = [\"done\"]\n"),
                "target 1 (\"hook\"): kinds: unknown firing kind \"done\": use complete, incomplete or late",
            ),
            (
                format!("{hook}max_attempts = 0\n"),
                "target 1 (\"hook\"): max_attempts: expected a whole number from 1 to 1000, found 0",
            ),
            (
                format!("{hook}backoff = {{ base = \"1mo\" }}\n"),
                "backoff.base: \"1mo\" has months or years",
            ),
            (
                format!("{hook}dag_id = \"x\"\n"),
                "target 1 (\"hook\"): dag_id: not a field of a webhook target",
            ),
            (
                format!("{hook}color = \"red\"\n"),
                "target 1 (\"hook\"): unknown field \"color\"",
            ),
            (
                format!("{hook}{hook}"),
                "target 2 (\"hook\"): name: another target is named \"hook\"",
            ),
            (
                "[[target]]\nname = \"af\"\nkind = \"airflow\"\nurl = \"http://a\"\ntoken = \"t\"\n"
                    .into(),
                "target 1 (\"af\"): give exactly one of asset_uri",
            ),
            (
                "[[target]]\nname = \"af\"\nkind = \"airflow\"\nurl = \"http://a\"\nasset_uri = \"a\"\ndag_id = \"d\"\ntoken = \"t\"\n"
                    .into(),
                "give exactly one of asset_uri and dag_id, not both",
            ),
            (
                "[[target]]\nname = \"af\"\nkind = \"airflow\"\nurl = \"http://a\"\nusername = \"u\"\ndag_id = \"d\"\n"
                    .into(),
                "target 1 (\"af\"): password is missing (username is given)",
            ),
            (
                "[[target]]\nname = \"af\"\nkind = \"airflow\"\nurl = \"http://a\"\ndag_id = \"d\"\n"
                    .into(),
                "give username and password, or token",
            ),
            (
                "[[target]]\nname = \"w\"\nkind = \"webhook\"\nurl = \"ftp://x\"\n".into(),
                "target 1 (\"w\"): url: \"ftp://x\" is not an http:// URL",
            ),
            (
                format!("lease = \"5s\"\n{hook}"),
                "lease: 5s is shorter than twice target \"hook\"'s timeout (10s)",
            ),
            ("leese = \"5s\"\n".into(), "unknown key \"leese\""),
            ("[[target]\n".into(), "invalid TOML at line 1"),
        ];
        for (text, want) in cases {
            let got = err(&text);
            assert!(
                got.contains(want),
                "{text}\n--- got: {got}\n--- want: {want}"
            );
            assert!(!got.contains('\n'), "one line: {got}");
        }
    }

    #[test]
    fn load_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("targets.toml");
        std::fs::write(&path, "[[target]]\nname = \"x\"\n").unwrap();
        let e = Targets::load(&path).unwrap_err().0;
        assert!(e.starts_with(&path.display().to_string()), "{e}");
        assert!(e.contains("target 1 (\"x\"): kind is missing"), "{e}");
        let e = Targets::load(&dir.path().join("nope.toml")).unwrap_err().0;
        assert!(e.starts_with("cannot read targets file"), "{e}");
    }
}
