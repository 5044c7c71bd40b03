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
//! # https:// URLs: the system's authorities are trusted (or SSL_CERT_FILE's)
//! ca_file = "ca.pem"       # optional: also trust these authorities
//! client_cert = "me.pem"   # optional, with client_key: shown when asked
//! client_key = "me.key"
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

use std::path::{Path, PathBuf};
use std::time::Duration;

use gapless_core::{ConfigError, ConfigProblem, ConfigStep, ConfigSyntax, ConfigValue, FiringKind};
use serde::Deserialize;

/// The environment variable naming the targets file when `--targets-file`
/// is not given.
pub const TARGETS_ENV: &str = "GAPLESS_TARGETS_FILE";

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
    /// The agent of an `https://` URL, with its TLS settings (`ca_file`,
    /// `client_cert`, `client_key`); `None` for `http://`, sent through
    /// the deliverer's shared agent.
    pub https: Option<crate::send::HttpsAgent>,
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
    /// The agent of an `https://` URL, with its TLS settings; `None` for
    /// `http://`, sent through the deliverer's shared agent.
    pub https: Option<crate::send::HttpsAgent>,
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

impl Targets {
    /// Read and check the targets file at `path`.
    ///
    /// # Errors
    ///
    /// An unreadable file, or the first problem in it, one line naming the
    /// file, the entry and the field.
    pub fn load(path: &Path) -> Result<Targets, TargetsError> {
        let path = path.to_path_buf();
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                Targets::parse(&text).map_err(|problem| TargetsError::Invalid { path, problem })
            }
            Err(source) => Err(TargetsError::Read { path, source }),
        }
    }

    /// Check the text of a targets file: serde reads each value into the
    /// types below, then each target's values are checked together.
    ///
    /// # Errors
    ///
    /// The first problem, naming the entry and the field.
    pub fn parse(text: &str) -> Result<Targets, TargetsProblem> {
        let doc = ConfigValue::from_toml(text).map_err(Problem::Syntax)?;
        let file: File =
            doc.deserialize(ConfigSyntax::Toml)
                .map_err(|e| match e.path.get(..2) {
                    Some([_, ConfigStep::Index(i)]) => {
                        let name = doc.at(&e.path[..2]).and_then(|t| t.get("name")?.as_str());
                        Problem::In(which(*i, name), Box::new(Problem::Read(e)))
                    }
                    _ => Problem::Read(e),
                })?;
        let lease = duration("lease", file.lease.as_deref(), Duration::from_secs(60))?;
        let poll = duration("poll", file.poll.as_deref(), Duration::from_secs(1))?;
        let mut targets: Vec<Target> = Vec::with_capacity(file.target.len());
        for (i, entry) in file.target.into_iter().enumerate() {
            let this = which(i, Some(entry.name.as_str()));
            let t = entry
                .check()
                .map_err(|p| Problem::In(this.clone(), Box::new(p)))?;
            if targets.iter().any(|o| o.name == t.name) {
                return Err(Problem::In(this, Box::new(Problem::NameTaken(t.name))).into());
            }
            if lease < 2 * t.timeout {
                let (lease, timeout) = (show(lease), show(t.timeout));
                return Err(Problem::ShortLease(lease, t.name, timeout).into());
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

/// A bad targets file.
#[derive(Debug, thiserror::Error)]
pub enum TargetsError {
    /// It cannot be read.
    #[error("cannot read targets file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// What is in it is wrong.
    #[error("{}: {problem}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The first problem.
        problem: TargetsProblem,
    },
}

/// What is wrong with the text of a targets file: one line naming the
/// entry, the field and what is accepted.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct TargetsProblem(#[from] Problem);

#[derive(Debug, thiserror::Error)]
enum Problem {
    #[error(transparent)]
    Syntax(ConfigError),
    /// A value the types below do not take.
    #[error("{}", words(.0))]
    Read(ConfigError),
    /// A problem of the entry named first (`target 2 ("hook")`).
    #[error("{0}: {1}")]
    In(String, Box<Problem>),
    #[error(
        "lease: {0} is shorter than twice target {1:?}'s timeout ({2}): a lease must outlast a \
         delivery attempt"
    )]
    ShortLease(String, String, String),
    #[error("name: {0}")]
    Name(String),
    #[error("name: another target is named {0:?}: names are unique")]
    NameTaken(String),
    #[error("{0}: must not be empty")]
    Empty(&'static str),
    #[error("kinds: expected a non-empty array such as [\"complete\", \"late\"], found []")]
    NoKinds,
    #[error("kinds: unknown firing kind {0:?}: use complete, incomplete or late")]
    FiringKind(String),
    #[error("max_attempts: expected a whole number from 1 to 1000, found {0}")]
    MaxAttempts(i64),
    #[error("{0}: {1}")]
    Duration(&'static str, String),
    #[error("{0}: {1:?} has months or years: give a fixed length such as \"30s\"")]
    Calendar(&'static str, String),
    #[error("backoff: max ({0}) is shorter than base ({1})")]
    Backoff(String, String),
    #[error("url: {0:?} is not an http:// or https:// URL")]
    NotHttp(String),
    #[error("{0}: only for an https:// url (url is {1:?})")]
    TlsForPlain(&'static str, String),
    #[error("{0}: {1}")]
    TlsFile(&'static str, String),
    #[error("{0}: not a field of a {1} target (its fields: url, {2})")]
    NotAField(&'static str, &'static str, String),
    #[error("give username and password, or token, to authenticate to Airflow")]
    NoAuth,
    #[error("token: give either token or username and password, not both")]
    TokenAndPassword,
    #[error("password is missing (username is given)")]
    NoPassword,
    #[error("username is missing (password is given)")]
    NoUsername,
    #[error("give exactly one of asset_uri and dag_id, not both")]
    AssetAndDag,
    #[error(
        "give exactly one of asset_uri (an asset event per firing) and dag_id (a DAG run per \
         firing)"
    )]
    NoAssetOrDag,
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    lease: Option<String>,
    poll: Option<String>,
    #[serde(default)]
    target: Vec<Entry>,
}

/// A `[[target]]` entry as written; its fields in the order messages list
/// them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    kind: Kind,
    kinds: Option<Vec<String>>,
    max_attempts: Option<i64>,
    backoff: Option<Backoff>,
    timeout: Option<String>,
    url: String,
    secret: Option<String>,
    username: Option<String>,
    password: Option<String>,
    token: Option<String>,
    asset_uri: Option<String>,
    dag_id: Option<String>,
    ca_file: Option<PathBuf>,
    client_cert: Option<PathBuf>,
    client_key: Option<PathBuf>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Webhook,
    Airflow,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Backoff {
    base: Option<String>,
    max: Option<String>,
}

/// How `backoff` is written.
const BACKOFF: &str = "{ base = \"1s\", max = \"5m\" }";

/// serde's problem with the file, in its words.
fn words(e: &ConfigError) -> String {
    let entry = e.path.len() >= 2 && e.path[0] == ConfigStep::Key("target".into());
    let field = e.field(if entry { 2 } else { 0 });
    match &e.problem {
        ConfigProblem::UnknownField { field: key, .. } if !entry => {
            format!("unknown key {key:?}: the file holds lease, poll and [[target]] entries")
        }
        ConfigProblem::UnknownField { field: key, .. } if field.starts_with("backoff.") => {
            format!("backoff: unknown field {key:?}: give base and max, such as {BACKOFF}")
        }
        ConfigProblem::UnknownField { field, expected } => {
            format!(
                "unknown field {field:?}: the fields are {}",
                expected.join(", ")
            )
        }
        ConfigProblem::Missing("name") => {
            "name is missing: give the name rules use in --target".into()
        }
        ConfigProblem::Missing("kind") => "kind is missing: use webhook or airflow".into(),
        ConfigProblem::UnknownVariant { variant, .. } => {
            format!("kind: unknown kind {variant:?}: use webhook or airflow")
        }
        ConfigProblem::Type { found, expected } => {
            let expected = match (field.as_str(), e.in_item()) {
                ("", _) => "a table".into(),
                ("target", _) => "[[target]] entries".into(),
                ("kind", _) => "webhook or airflow".into(),
                ("kinds", false) => "a non-empty array such as [\"complete\", \"late\"]".into(),
                ("kinds", true) => "firing kinds (complete, incomplete or late)".into(),
                ("max_attempts", _) => "a whole number from 1 to 1000".into(),
                ("backoff", _) => format!("a table such as {BACKOFF}"),
                ("lease" | "poll" | "timeout" | "backoff.base" | "backoff.max", _) => {
                    "a duration such as \"30s\"".into()
                }
                _ => expected.clone(),
            };
            match field.as_str() {
                "" => format!("expected {expected}, found {found}"),
                _ => format!("{field}: expected {expected}, found {found}"),
            }
        }
        problem if field.is_empty() => problem.to_string(),
        problem => format!("{field}: {problem}"),
    }
}

/// `target 2` or `target 2 ("hook")`.
fn which(index: usize, name: Option<&str>) -> String {
    gapless_core::config_entry("target", index, name)
}

impl Entry {
    /// The target these values describe, checked together.
    fn check(self) -> Result<Target, Problem> {
        gapless_core::validate_rule_name(&self.name).map_err(|e| Problem::Name(e.to_string()))?;
        let texts = [
            ("url", Some(&self.url)),
            ("secret", self.secret.as_ref()),
            ("username", self.username.as_ref()),
            ("password", self.password.as_ref()),
            ("token", self.token.as_ref()),
            ("asset_uri", self.asset_uri.as_ref()),
            ("dag_id", self.dag_id.as_ref()),
        ];
        if let Some((field, _)) = texts.iter().find(|(_, v)| v.is_some_and(|s| s.is_empty())) {
            return Err(Problem::Empty(field));
        }
        let (kind, fields): (&str, &[&str]) = match self.kind {
            Kind::Webhook => ("webhook", &["secret"]),
            Kind::Airflow => (
                "airflow",
                &["username", "password", "token", "asset_uri", "dag_id"],
            ),
        };
        if let Some((field, _)) = texts[1..]
            .iter()
            .find(|(f, v)| v.is_some() && !fields.contains(f))
        {
            return Err(Problem::NotAField(field, kind, fields.join(", ")));
        }
        let kinds = match self.kinds {
            None => vec![FiringKind::Complete],
            Some(names) if names.is_empty() => return Err(Problem::NoKinds),
            Some(names) => names
                .into_iter()
                .map(|n| {
                    let kind = FiringKind::ALL.into_iter().find(|k| k.as_str() == n);
                    kind.ok_or(Problem::FiringKind(n))
                })
                .collect::<Result<_, _>>()?,
        };
        let mut retry = Retry::default();
        if let Some(n) = self.max_attempts {
            retry.max_attempts = u32::try_from(n)
                .ok()
                .filter(|n| (1..=1000).contains(n))
                .ok_or(Problem::MaxAttempts(n))?;
        }
        if let Some(b) = self.backoff {
            retry.base = duration("backoff.base", b.base.as_deref(), retry.base)?;
            retry.max = duration("backoff.max", b.max.as_deref(), retry.max)?;
            if retry.max < retry.base {
                return Err(Problem::Backoff(show(retry.max), show(retry.base)));
            }
        }
        let timeout = duration("timeout", self.timeout.as_deref(), Duration::from_secs(10))?;
        let url = http_url(self.url)?;
        let https = tls(
            &url,
            gapless_client::tls::TlsFiles {
                ca_file: self.ca_file,
                cert: self.client_cert,
                key: self.client_key,
            },
        )?;
        let kind = match self.kind {
            Kind::Webhook => TargetKind::Webhook(Webhook {
                url,
                secret: self.secret,
                https: https.clone(),
            }),
            Kind::Airflow => TargetKind::Airflow(Airflow {
                url,
                https,
                auth: match (self.username, self.password, self.token) {
                    (Some(username), Some(password), None) => {
                        AirflowAuth::Password { username, password }
                    }
                    (None, None, Some(token)) => AirflowAuth::Token(token),
                    (None, None, None) => return Err(Problem::NoAuth),
                    (_, _, Some(_)) => return Err(Problem::TokenAndPassword),
                    (Some(_), None, None) => return Err(Problem::NoPassword),
                    (None, Some(_), None) => return Err(Problem::NoUsername),
                },
                to: match (self.asset_uri, self.dag_id) {
                    (Some(uri), None) => AirflowTo::Asset(uri),
                    (None, Some(dag)) => AirflowTo::Dag(dag),
                    (Some(_), Some(_)) => return Err(Problem::AssetAndDag),
                    (None, None) => return Err(Problem::NoAssetOrDag),
                },
            }),
        };
        Ok(Target {
            name: self.name,
            kinds,
            retry,
            timeout,
            kind,
        })
    }
}

/// An `http://` or `https://` URL with a host, without a trailing `/`.
fn http_url(url: String) -> Result<String, Problem> {
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    if !scheme_ok || crate::send::site(&url).is_none() {
        return Err(Problem::NotHttp(url));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// The agent of a target at `url` with its TLS settings: the files read
/// now, so that a file that cannot be used is an error of the targets
/// file, not of every delivery; `None` for `http://`, where the files are
/// refused.
fn tls(
    url: &str,
    files: gapless_client::tls::TlsFiles,
) -> Result<Option<crate::send::HttpsAgent>, Problem> {
    use gapless_client::tls::TlsFile;
    let field = |file| match file {
        TlsFile::CaFile => "ca_file",
        TlsFile::Cert => "client_cert",
        TlsFile::Key => "client_key",
        TlsFile::Roots => "url",
    };
    if !url.starts_with("https://") {
        let given = [
            (TlsFile::CaFile, &files.ca_file),
            (TlsFile::Cert, &files.cert),
            (TlsFile::Key, &files.key),
        ];
        return match given.iter().find(|(_, p)| p.is_some()) {
            Some((file, _)) => Err(Problem::TlsForPlain(field(*file), url.to_string())),
            None => Ok(None),
        };
    }
    files
        .config()
        .map(|tls| Some(crate::send::HttpsAgent::new(tls)))
        .map_err(|e| Problem::TlsFile(field(e.file), e.reason))
}

/// `d` as the short text form.
fn show(d: Duration) -> String {
    gapless_core::Duration::from_micros(i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .map_or_else(|_| format!("{d:?}"), |d| d.to_string())
}

/// A positive fixed duration (`30s`, `PT1M`), or `default` when not given.
fn duration(
    field: &'static str,
    text: Option<&str>,
    default: Duration,
) -> Result<Duration, Problem> {
    let Some(text) = text else {
        return Ok(default);
    };
    let d =
        gapless_core::Duration::parse(text).map_err(|e| Problem::Duration(field, e.to_string()))?;
    let us = d
        .fixed_micros()
        .ok_or_else(|| Problem::Calendar(field, text.to_string()))?;
    Ok(Duration::from_micros(u64::try_from(us).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Targets::parse(text).expect_err(text).to_string()
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
                "target 1 (\"w\"): url: \"ftp://x\" is not an http:// or https:// URL",
            ),
            (
                format!("{hook}ca_file = \"ca.pem\"\n"),
                "target 1 (\"hook\"): ca_file: only for an https:// url (url is \"http://h\")",
            ),
            (
                "[[target]]\nname = \"w\"\nkind = \"webhook\"\nurl = \"https://h\"\nca_file = \"/nonexistent/ca.pem\"\n".into(),
                "target 1 (\"w\"): ca_file: /nonexistent/ca.pem: cannot read it",
            ),
            (
                "[[target]]\nname = \"w\"\nkind = \"webhook\"\nurl = \"https://h\"\nclient_key = \"k.pem\"\n".into(),
                "target 1 (\"w\"): client_cert: missing: a private key needs its client certificate",
            ),
            (
                format!("lease = \"5s\"\n{hook}"),
                "lease: 5s is shorter than twice target \"hook\"'s timeout (10s)",
            ),
            ("leese = \"5s\"\n".into(), "unknown key \"leese\""),
            (
                format!("{hook}color = 1\n"),
                "target 1 (\"hook\"): unknown field \"color\": the fields are name, kind, kinds, \
                 max_attempts, backoff, timeout, url, secret, username, password, token, \
                 asset_uri, dag_id, ca_file, client_cert, client_key",
            ),
            ("target = [1]\n".into(), "target 1: expected a table, found an integer"),
            (
                "[target]\nname = \"x\"\n".into(),
                "target: expected [[target]] entries, found a table",
            ),
            (
                "lease = 30\n".into(),
                "lease: expected a duration such as \"30s\", found an integer",
            ),
            (
                "[[target]]\nname = \"x\"\nkind = 5\n".into(),
                "target 1 (\"x\"): kind: expected webhook or airflow, found an integer",
            ),
            (
                format!("{hook}kinds = [\"complete\", 1]\n"),
                "target 1 (\"hook\"): kinds: expected firing kinds (complete, incomplete or \
                 late), found an integer",
            ),
            (
                format!("{hook}backoff = {{ base = 1 }}\n"),
                "target 1 (\"hook\"): backoff.base: expected a duration such as \"30s\", found \
                 an integer",
            ),
            (
                format!("{hook}backoff = {{ bse = \"1s\" }}\n"),
                "target 1 (\"hook\"): backoff: unknown field \"bse\": give base and max, such \
                 as { base = \"1s\", max = \"5m\" }",
            ),
            (
                format!("{hook}secret = \"\"\n"),
                "target 1 (\"hook\"): secret: must not be empty",
            ),
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
        let e = Targets::load(&path).unwrap_err().to_string();
        assert!(e.starts_with(&path.display().to_string()), "{e}");
        assert!(e.contains("target 1 (\"x\"): kind is missing"), "{e}");
        let e = Targets::load(&dir.path().join("nope.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cannot read targets file"), "{e}");
    }
}
