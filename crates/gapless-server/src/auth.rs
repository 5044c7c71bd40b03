//! Access control: bearer tokens with scopes.
//!
//! A token has scopes: `read` (every question, `/metrics`,
//! `/openapi.json`), `write` (record events of the assets whose names start
//! with one of its `prefixes`; every asset when it has none) and `admin`
//! (everything, including declaring assets). Tokens come from a TOML or JSON
//! file or the `GAPLESS_TOKENS` environment variable:
//!
//! ```toml
//! [[token]]
//! name = "orders-producer"        # optional, for logs
//! secret = "a long random string" # at least 16 characters
//! scopes = ["read", "write"]
//! prefixes = ["s3://lake/orders"]
//! ```
//!
//! The same as JSON: `{"token": [{"secret": "...", "scopes": ["read"]}]}`
//! or just the array. Secrets are compared in constant time and never
//! logged. Without tokens the server is open, and then only listens on a
//! loopback address.

use std::path::Path;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use gapless_core::{ConfigError, ConfigProblem, ConfigSyntax, ConfigValue};
use serde::Deserialize;
use serde_json::json;
use subtle::ConstantTimeEq;

use crate::{ApiError, AppState, ServerError};

/// The environment variable holding the tokens (TOML or JSON text).
pub const TOKENS_ENV: &str = "GAPLESS_TOKENS";
/// The environment variable naming a tokens file.
pub const TOKENS_FILE_ENV: &str = "GAPLESS_TOKENS_FILE";
/// The shortest secret accepted.
pub const MIN_SECRET_LEN: usize = 16;

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Ask every question.
    Read,
    /// Record events (of assets under the token's prefixes).
    Write,
    /// Everything, including declaring assets.
    Admin,
}

impl Scope {
    fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }
}

/// The scopes, for messages.
const SCOPES: &str = "read, write or admin";

/// One configured token.
#[derive(Clone)]
pub struct Token {
    /// A label for logs (never the secret).
    pub name: Option<String>,
    secret: String,
    /// What it may do.
    pub scopes: Vec<Scope>,
    /// The asset-name prefixes it may write; none: every asset.
    pub prefixes: Vec<String>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("name", &self.name)
            .field("secret", &"<redacted>")
            .field("scopes", &self.scopes)
            .field("prefixes", &self.prefixes)
            .finish()
    }
}

impl Token {
    /// A token with `secret`, `scopes` and write `prefixes` (empty: every
    /// asset).
    pub fn new(secret: impl Into<String>, scopes: &[Scope], prefixes: &[&str]) -> Token {
        Token {
            name: None,
            secret: secret.into(),
            scopes: scopes.to_vec(),
            prefixes: prefixes.iter().map(|p| p.to_string()).collect(),
        }
    }

    fn has(&self, scope: Scope) -> bool {
        self.scopes.contains(&Scope::Admin) || self.scopes.contains(&scope)
    }

    fn may_write(&self, asset: &str) -> bool {
        self.scopes.contains(&Scope::Admin)
            || (self.scopes.contains(&Scope::Write)
                && (self.prefixes.is_empty()
                    || self.prefixes.iter().any(|p| asset.starts_with(p.as_str()))))
    }

    fn label(&self) -> &str {
        self.name.as_deref().unwrap_or("unnamed token")
    }
}

/// The configured tokens (at least one).
#[derive(Debug, Clone)]
pub struct Tokens {
    tokens: Arc<[Token]>,
}

impl Tokens {
    /// These tokens.
    ///
    /// # Errors
    ///
    /// [`ServerError::Config`] for no tokens, a short or repeated secret, or
    /// a token without scopes.
    pub fn new(tokens: Vec<Token>) -> Result<Tokens, ServerError> {
        if tokens.is_empty() {
            return Err(ServerError::Config("tokens: no token is configured".into()));
        }
        check(&tokens).map_err(|p| config("tokens", &p))?;
        Ok(Tokens {
            tokens: tokens.into(),
        })
    }

    /// Parse tokens from TOML (`[[token]]` tables) or JSON (`{"token": [...]}`
    /// or an array).
    ///
    /// # Errors
    ///
    /// [`ServerError::Config`]: one line naming the token (1-based, and its
    /// name if it has one), the field and what it accepts.
    pub fn parse(text: &str) -> Result<Tokens, ServerError> {
        Tokens::parse_from(text, "tokens")
    }

    /// Read tokens from the file at `path`.
    ///
    /// # Errors
    ///
    /// [`ServerError::Config`] when the file cannot be read or is invalid,
    /// starting with the path.
    pub fn load(path: &Path) -> Result<Tokens, ServerError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ServerError::Config(format!("cannot read tokens file {}: {e}", path.display()))
        })?;
        Tokens::parse_from(&text, &path.display().to_string())
    }

    /// Tokens from `GAPLESS_TOKENS` (the text) or `GAPLESS_TOKENS_FILE` (a
    /// path), or `None` when neither is set.
    ///
    /// # Errors
    ///
    /// [`ServerError::Config`] when the tokens given are invalid, starting
    /// with where they came from.
    pub fn from_env() -> Result<Option<Tokens>, ServerError> {
        if let Some(text) = std::env::var_os(TOKENS_ENV) {
            let text = text
                .into_string()
                .map_err(|_| ServerError::Config(format!("{TOKENS_ENV} is not UTF-8")))?;
            // Set but empty is more likely a deployment slip than a wish for
            // an open server, and unsetting it is how to ask for that.
            if text.trim().is_empty() {
                return Err(ServerError::Config(format!(
                    "{TOKENS_ENV} is empty: give [[token]] entries or unset it"
                )));
            }
            return Tokens::parse_from(&text, TOKENS_ENV).map(Some);
        }
        match std::env::var_os(TOKENS_FILE_ENV) {
            Some(path) => Tokens::load(Path::new(&path)).map(Some),
            None => Ok(None),
        }
    }

    /// Parse `text`, naming `origin` (a path, `GAPLESS_TOKENS`) in errors.
    fn parse_from(text: &str, origin: &str) -> Result<Tokens, ServerError> {
        read(text).map_err(|p| config(origin, &p))
    }

    /// The token with this secret, compared in constant time against every
    /// configured one.
    fn find(&self, secret: &[u8]) -> Option<&Token> {
        let mut found = None;
        for t in self.tokens.iter() {
            if bool::from(t.secret.as_bytes().ct_eq(secret)) {
                found = Some(t);
            }
        }
        found
    }
}

fn config(origin: &str, problem: &TokensProblem) -> ServerError {
    ServerError::Config(format!("{origin}: {problem}"))
}

/// A `[[token]]` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: Option<String>,
    secret: String,
    scopes: Vec<Scope>,
    #[serde(default)]
    prefixes: Vec<String>,
}

/// What is wrong with a tokens text, in the words of its syntax: one line,
/// after where it came from.
#[derive(Debug, thiserror::Error)]
enum TokensProblem {
    #[error(transparent)]
    Syntax(#[from] ConfigError),
    #[error("no tokens: give at least one {}", entry_of(*.0))]
    NoTokens(ConfigSyntax),
    #[error("unknown key {key:?}: {}", match syntax {
        ConfigSyntax::Toml => "the tokens go in [[token]] entries",
        ConfigSyntax::Json => "give {\"token\": [...]} or an array of tokens",
    })]
    UnknownKey { key: String, syntax: ConfigSyntax },
    #[error("{key}: expected {}, found {found}", match syntax {
        ConfigSyntax::Toml => format!("[[{key}]] entries (an array of tables)"),
        ConfigSyntax::Json => "an array of token objects".to_string(),
    })]
    NotEntries {
        key: String,
        found: &'static str,
        syntax: ConfigSyntax,
    },
    #[error("give token or tokens, not both")]
    TokenAndTokens,
    #[error("expected {{\"token\": [...]}} or an array of tokens, found {0}")]
    NotTokens(&'static str),
    /// `token 2 ("ci"): ...`.
    #[error("{0}: {1}")]
    Entry(String, EntryProblem),
}

/// What a token entry is called.
fn entry_of(syntax: ConfigSyntax) -> &'static str {
    match syntax {
        ConfigSyntax::Toml => "[[token]] entry",
        ConfigSyntax::Json => "token object",
    }
}

/// What is wrong with one token.
#[derive(Debug, thiserror::Error)]
enum EntryProblem {
    #[error("secret: must have at least {MIN_SECRET_LEN} characters")]
    ShortSecret,
    #[error("secret: must not contain spaces or control characters")]
    SecretSpaces,
    #[error("scopes: give at least one scope ({SCOPES})")]
    NoScopes,
    #[error("secret: given twice (also in {0})")]
    SecretTwice(String),
    #[error("{}", words(.0, *.1))]
    Read(ConfigError, ConfigSyntax),
}

/// serde's problem with an entry, in the words of a tokens file.
fn words(e: &ConfigError, syntax: ConfigSyntax) -> String {
    let field = e.field(0);
    match &e.problem {
        ConfigProblem::UnknownField { field, expected } => format!(
            "unknown field {field:?}: the fields are {}",
            expected.join(", ")
        ),
        ConfigProblem::Missing("secret") => format!(
            "secret is missing: give a random string of at least {MIN_SECRET_LEN} characters"
        ),
        ConfigProblem::Missing("scopes") => {
            format!("scopes is missing: give at least one scope ({SCOPES})")
        }
        ConfigProblem::UnknownVariant { variant, .. } => {
            format!("{field}: unknown scope {variant:?}: use {SCOPES}")
        }
        ConfigProblem::Type { found, .. } if e.path.is_empty() => {
            format!("expected {}, found {found}", syntax.table())
        }
        ConfigProblem::Type { found, expected } => {
            let expected = match (field.as_str(), e.in_item()) {
                ("scopes", false) => "an array such as [\"read\"]".into(),
                ("scopes", true) => format!("scope names ({SCOPES})"),
                ("prefixes", false) => "an array of strings".into(),
                ("prefixes", true) => "asset-name prefixes (strings)".into(),
                _ => expected.clone(),
            };
            format!("{field}: expected {expected}, found {found}")
        }
        _ => e.to_string(),
    }
}

/// `token 2` or `token 2 ("orders-producer")`.
fn which(index: usize, name: Option<&str>) -> String {
    gapless_core::config_entry("token", index, name)
}

/// Read tokens from TOML (`[[token]]` tables) or JSON (`{"token": [...]}`
/// or an array), each entry through serde, then [`check`] them.
fn read(text: &str) -> Result<Tokens, TokensProblem> {
    let trimmed = text.trim_start();
    // `[[token]]` is TOML; `[{...}]`, `[]` and `{...}` are JSON.
    let after_bracket = trimmed.strip_prefix('[').map(str::trim_start);
    let (doc, syntax) = if trimmed.starts_with('{')
        || after_bracket.is_some_and(|r| r.starts_with('{') || r.starts_with(']'))
    {
        (ConfigValue::from_json(text)?, ConfigSyntax::Json)
    } else {
        (ConfigValue::from_toml(text)?, ConfigSyntax::Toml)
    };
    let tokens = entries(&doc, syntax)?
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let e: Entry = entry.deserialize(syntax).map_err(|e| {
                let name = entry.get("name").and_then(ConfigValue::as_str);
                TokensProblem::Entry(which(i, name), EntryProblem::Read(e, syntax))
            })?;
            Ok(Token {
                name: e.name,
                secret: e.secret,
                scopes: e.scopes,
                prefixes: e.prefixes,
            })
        })
        .collect::<Result<Vec<_>, TokensProblem>>()?;
    check(&tokens)?;
    Ok(Tokens {
        tokens: tokens.into(),
    })
}

/// The token entries of a document: the array under `token` (or
/// `tokens`), or, in JSON, the document itself. Found by hand: serde's
/// errors for a choice of shapes cannot say which one was meant.
fn entries(doc: &ConfigValue, syntax: ConfigSyntax) -> Result<&[ConfigValue], TokensProblem> {
    let list = match doc {
        ConfigValue::Array(list) if syntax == ConfigSyntax::Json => list,
        ConfigValue::Table(keys) => {
            if let Some((k, _)) = keys.iter().find(|(k, _)| k != "token" && k != "tokens") {
                let key = k.clone();
                return Err(TokensProblem::UnknownKey { key, syntax });
            }
            match keys.as_slice() {
                [(_, ConfigValue::Array(list))] => list,
                [(k, other)] => {
                    let (key, found) = (k.clone(), other.kind(syntax));
                    return Err(TokensProblem::NotEntries { key, found, syntax });
                }
                [_, _] => return Err(TokensProblem::TokenAndTokens),
                _ => return Err(TokensProblem::NoTokens(syntax)),
            }
        }
        other => return Err(TokensProblem::NotTokens(other.kind(syntax))),
    };
    if list.is_empty() {
        return Err(TokensProblem::NoTokens(syntax));
    }
    Ok(list)
}

/// What every token must satisfy, whatever it was built from.
fn check(tokens: &[Token]) -> Result<(), TokensProblem> {
    for (i, t) in tokens.iter().enumerate() {
        let problem = if t.secret.chars().count() < MIN_SECRET_LEN {
            EntryProblem::ShortSecret
        } else if t
            .secret
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
        {
            EntryProblem::SecretSpaces
        } else if t.scopes.is_empty() {
            EntryProblem::NoScopes
        } else if let Some(j) = tokens[..i].iter().position(|o| o.secret == t.secret) {
            EntryProblem::SecretTwice(which(j, tokens[j].name.as_deref()))
        } else {
            continue;
        };
        return Err(TokensProblem::Entry(which(i, t.name.as_deref()), problem));
    }
    Ok(())
}

/// Who is asking: anyone (no tokens configured) or the holder of a token.
#[derive(Debug, Clone)]
pub enum Caller {
    /// No tokens are configured: everything is allowed.
    Open,
    /// A valid token.
    Token(Token),
}

impl Caller {
    /// Allow only a caller with `scope`.
    ///
    /// # Errors
    ///
    /// 403 naming the scope needed.
    pub fn require(&self, scope: Scope) -> Result<(), ApiError> {
        match self {
            Caller::Open => Ok(()),
            Caller::Token(t) if t.has(scope) => Ok(()),
            Caller::Token(t) => {
                tracing::info!(
                    token = t.label(),
                    scope = scope.as_str(),
                    "refused: scope missing"
                );
                Err(ApiError::forbidden(format!(
                    "this token does not have the {} scope",
                    scope.as_str()
                ))
                .with_detail(json!({"scope": scope.as_str()})))
            }
        }
    }

    /// Whether this caller may write some assets and not others: a token
    /// with the write scope and prefixes, but not the admin scope.
    pub fn writes_some_assets_only(&self) -> bool {
        matches!(self, Caller::Token(t) if !t.scopes.contains(&Scope::Admin) && !t.prefixes.is_empty())
    }

    /// Allow only a caller that may write `asset`.
    ///
    /// # Errors
    ///
    /// Why not, naming the asset.
    pub fn require_write(&self, asset: &str) -> Result<(), WriteRefused> {
        match self {
            Caller::Open => Ok(()),
            Caller::Token(t) if t.may_write(asset) => Ok(()),
            Caller::Token(t) => {
                tracing::info!(
                    token = t.label(),
                    asset,
                    "refused: asset outside the token's prefixes"
                );
                Err(if t.has(Scope::Write) {
                    WriteRefused::OutsidePrefixes(asset.to_string())
                } else {
                    WriteRefused::NoWriteScope
                })
            }
        }
    }
}

/// Why a caller may not write an asset (a 403).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteRefused {
    /// The token writes other assets.
    #[error("this token may not write asset {0:?}: it is outside the token's prefixes")]
    OutsidePrefixes(String),
    /// The token writes nothing.
    #[error("this token does not have the write scope")]
    NoWriteScope,
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Caller, ApiError> {
        let Some(tokens) = state.tokens() else {
            return Ok(Caller::Open);
        };
        let header = parts.headers.get(AUTHORIZATION).ok_or_else(|| {
            ApiError::unauthorized("missing bearer token: send Authorization: Bearer TOKEN")
        })?;
        let value = header.as_bytes();
        let secret = value
            .split_at_checked(7)
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case(b"bearer "))
            .map(|(_, s)| s.trim_ascii())
            .ok_or_else(|| {
                ApiError::unauthorized("the Authorization header must be: Bearer TOKEN")
            })?;
        match tokens.find(secret) {
            Some(t) => Ok(Caller::Token(t.clone())),
            None => {
                tracing::info!("refused: unknown token");
                Err(ApiError::unauthorized("invalid token"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOML: &str = r#"
[[token]]
name = "reader"
secret = "reader-secret-0123456789"
scopes = ["read"]

[[token]]
secret = "writer-secret-0123456789"
scopes = ["write"]
prefixes = ["s3://lake/orders", "team-a/"]
"#;

    #[test]
    fn parses_toml_and_json() {
        let t = Tokens::parse(TOML).unwrap();
        assert_eq!(t.tokens.len(), 2);
        assert_eq!(t.tokens[1].prefixes, ["s3://lake/orders", "team-a/"]);
        let j =
            Tokens::parse(r#"{"token": [{"secret": "0123456789abcdef", "scopes": ["admin"]}]}"#)
                .unwrap();
        assert_eq!(j.tokens[0].scopes, [Scope::Admin]);
        let a = Tokens::parse(r#"[{"secret": "0123456789abcdef", "scopes": ["read"]}]"#).unwrap();
        assert_eq!(a.tokens.len(), 1);
    }

    #[test]
    fn rejects_bad_configurations() {
        for (text, needle) in [
            (
                r#"[{"secret": "short", "scopes": ["read"]}]"#,
                "at least 16",
            ),
            (
                r#"[{"secret": "0123456789abcdef", "scopes": []}]"#,
                "at least one scope",
            ),
            ("[]", "no token"),
            (
                r#"[{"secret": "0123456789abcdef", "scopes": ["root"]}]"#,
                "unknown scope \"root\"",
            ),
            ("[[token]]\nsecret = 1", "secret: expected a string"),
            (
                r#"[{"secret": "0123456789abcdef", "scopes": ["read"]}, {"secret": "0123456789abcdef", "scopes": ["admin"]}]"#,
                "twice",
            ),
            ("[[token]]\nsecret = ", "invalid TOML"),
            (r#"{"token": [}"#, "invalid JSON"),
        ] {
            let e = Tokens::parse(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    /// Each message in full: one line naming the entry, the field and what
    /// is accepted.
    #[test]
    fn every_error_names_the_entry_the_field_and_what_is_accepted() {
        const S: &str = "0123456789abcdef";
        let cases: &[(String, &str)] = &[
            (
                format!(
                    "[[token]]\nsecret = \"{S}\"\nscopes = [\"read\"]\n\n[[token]]\nname = \"orders-producer\"\nsecret = \"{S}-w\"\nscope = [\"write\"]\n"
                ),
                r#"token 2 ("orders-producer"): unknown field "scope": the fields are name, secret, scopes, prefixes"#,
            ),
            (
                format!("[[token]]\nsecret = \"{S}\"\nscopes = [\"raed\"]\n"),
                r#"token 1: scopes: unknown scope "raed": use read, write or admin"#,
            ),
            (
                format!(r#"[{{"name": "ci", "secret": "{S}", "scopes": ["read", "raed"]}}]"#),
                r#"token 1 ("ci"): scopes: unknown scope "raed": use read, write or admin"#,
            ),
            (String::new(), "no tokens: give at least one [[token]] entry"),
            ("\n  # nothing yet\n".into(), "no tokens: give at least one [[token]] entry"),
            ("[]".into(), "no tokens: give at least one token object"),
            (r#"{"token": []}"#.into(), "no tokens: give at least one token object"),
            (
                "[[token]]\nsecret = 1\nscopes = [\"read\"]".into(),
                "token 1: secret: expected a string, found an integer",
            ),
            (
                "[[token]]\nsecret = 1979-05-27T07:32:00Z\nscopes = [\"read\"]".into(),
                "token 1: secret: expected a string, found a date-time",
            ),
            (
                "[[token]]\nname = \"x\"\nscopes = [\"read\"]".into(),
                r#"token 1 ("x"): secret is missing: give a random string of at least 16 characters"#,
            ),
            (
                format!(r#"[{{"secret": "{S}"}}]"#),
                "token 1: scopes is missing: give at least one scope (read, write or admin)",
            ),
            (
                format!("[[token]]\nsecret = \"{S}\"\nscopes = \"read\""),
                r#"token 1: scopes: expected an array such as ["read"], found a string"#,
            ),
            (
                format!(r#"[{{"secret": "{S}", "scopes": [1]}}]"#),
                "token 1: scopes: expected scope names (read, write or admin), found a number",
            ),
            (
                format!("[[token]]\nsecret = \"{S}\"\nscopes = []"),
                "token 1: scopes: give at least one scope (read, write or admin)",
            ),
            (
                format!("[[token]]\nsecret = \"{S}\"\nscopes = [\"write\"]\nprefixes = \"a/\""),
                "token 1: prefixes: expected an array of strings, found a string",
            ),
            (
                format!(r#"[{{"secret": "{S}", "scopes": ["write"], "prefixes": [null]}}]"#),
                "token 1: prefixes: expected asset-name prefixes (strings), found null",
            ),
            (
                format!("[[token]]\nname = 5\nsecret = \"{S}\"\nscopes = [\"read\"]"),
                "token 1: name: expected a string, found an integer",
            ),
            (
                "[[token]]\nname = \"short\"\nsecret = \"abc\"\nscopes = [\"read\"]".into(),
                r#"token 1 ("short"): secret: must have at least 16 characters"#,
            ),
            (
                "[[token]]\nsecret = \"0123456789 abcdef\"\nscopes = [\"read\"]".into(),
                "token 1: secret: must not contain spaces or control characters",
            ),
            (
                format!(
                    r#"[{{"name": "a", "secret": "{S}", "scopes": ["read"]}}, {{"secret": "{S}", "scopes": ["admin"]}}]"#
                ),
                r#"token 2: secret: given twice (also in token 1 ("a"))"#,
            ),
            (
                format!(r#"[{{"secret": "{S}", "scopes": ["read"]}}, "{S}"]"#),
                "token 2: expected an object, found a string",
            ),
            (
                format!("[token]\nsecret = \"{S}\"\nscopes = [\"read\"]"),
                "token: expected [[token]] entries (an array of tables), found a table",
            ),
            (
                format!(r#"{{"token": {{"secret": "{S}", "scopes": ["read"]}}}}"#),
                "token: expected an array of token objects, found an object",
            ),
            (
                format!("[[tokn]]\nsecret = \"{S}\"\nscopes = [\"read\"]"),
                r#"unknown key "tokn": the tokens go in [[token]] entries"#,
            ),
            (
                format!(r#"{{"tokens": [{{"secret": "{S}", "scopes": ["read"]}}], "version": 1}}"#),
                r#"unknown key "version": give {"token": [...]} or an array of tokens"#,
            ),
            (
                format!(
                    "[[token]]\nsecret = \"{S}\"\nscopes = [\"read\"]\n[[tokens]]\nsecret = \"{S}-2\"\nscopes = [\"read\"]"
                ),
                "give token or tokens, not both",
            ),
            (
                "[[token]]\nsecret = \"0123456789abcdef\"\nscopes = [\"read\"\n".into(),
                "invalid TOML at line 3: ",
            ),
            (
                r#"{"token": [{"secret": 1,}]}"#.into(),
                "invalid JSON: trailing comma at line 1 column 25",
            ),
        ];
        for (text, expected) in cases {
            let e = Tokens::parse(text).unwrap_err().to_string();
            let expected = format!("tokens: {expected}");
            if expected.ends_with(": ") {
                assert!(e.starts_with(&expected), "{text:?}:\n{e}");
            } else {
                assert_eq!(e, expected, "{text:?}");
            }
            assert!(!e.contains('\n'), "not one line: {e:?}");
        }
    }

    #[test]
    fn tokens_is_an_alias_of_token() {
        let t = Tokens::parse("[[tokens]]\nsecret = \"0123456789abcdef\"\nscopes = [\"read\"]")
            .unwrap();
        assert_eq!(t.tokens.len(), 1);
    }

    #[test]
    fn a_file_names_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        let p = path.display();
        std::fs::write(
            &path,
            "[[token]]\nname = \"orders-producer\"\nsecret = \"0123456789abcdef\"\nscope = [\"write\"]\n",
        )
        .unwrap();
        assert_eq!(
            Tokens::load(&path).unwrap_err().to_string(),
            format!(
                r#"{p}: token 1 ("orders-producer"): unknown field "scope": the fields are name, secret, scopes, prefixes"#
            )
        );
        std::fs::write(&path, "").unwrap();
        assert_eq!(
            Tokens::load(&path).unwrap_err().to_string(),
            format!("{p}: no tokens: give at least one [[token]] entry")
        );
        std::fs::write(&path, TOML).unwrap();
        assert_eq!(Tokens::load(&path).unwrap().tokens.len(), 2);
        let missing = dir.path().join("absent.toml");
        let e = Tokens::load(&missing).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("cannot read tokens file {}: ", missing.display())),
            "{e}"
        );
    }

    /// The only test of this binary that touches these variables, so
    /// setting them does not race another test.
    #[test]
    fn the_environment_names_the_variable() {
        let dir = tempfile::tempdir().unwrap();
        std::env::remove_var(TOKENS_FILE_ENV);
        for (value, expected) in [
            (
                "",
                "GAPLESS_TOKENS is empty: give [[token]] entries or unset it",
            ),
            (
                " \n",
                "GAPLESS_TOKENS is empty: give [[token]] entries or unset it",
            ),
            (
                "[[token]]\nsecret = \"0123456789abcdef\"\nscopes = [\"raed\"]",
                r#"GAPLESS_TOKENS: token 1: scopes: unknown scope "raed": use read, write or admin"#,
            ),
            (
                "[]",
                "GAPLESS_TOKENS: no tokens: give at least one token object",
            ),
        ] {
            std::env::set_var(TOKENS_ENV, value);
            assert_eq!(
                Tokens::from_env().unwrap_err().to_string(),
                expected,
                "{value:?}"
            );
        }
        std::env::set_var(TOKENS_ENV, TOML);
        assert_eq!(Tokens::from_env().unwrap().unwrap().tokens.len(), 2);

        std::env::remove_var(TOKENS_ENV);
        let path = dir.path().join("tokens.json");
        std::fs::write(
            &path,
            r#"[{"secret": "0123456789abcdef", "scopes": "read"}]"#,
        )
        .unwrap();
        std::env::set_var(TOKENS_FILE_ENV, &path);
        assert_eq!(
            Tokens::from_env().unwrap_err().to_string(),
            format!(
                r#"{}: token 1: scopes: expected an array such as ["read"], found a string"#,
                path.display()
            )
        );
        std::env::remove_var(TOKENS_FILE_ENV);
        assert!(Tokens::from_env().unwrap().is_none());
    }

    #[test]
    fn scopes_and_prefixes() {
        let t = Tokens::parse(TOML).unwrap();
        let reader = t.find(b"reader-secret-0123456789").unwrap();
        let writer = t.find(b"writer-secret-0123456789").unwrap();
        assert!(t.find(b"reader-secret-012345678").is_none());
        assert!(reader.has(Scope::Read) && !reader.has(Scope::Write) && !reader.may_write("x"));
        assert!(writer.may_write("s3://lake/orders/2025") && writer.may_write("team-a/x"));
        assert!(!writer.may_write("s3://lake/other") && !writer.has(Scope::Read));
        let admin = Token::new("0123456789abcdef", &[Scope::Admin], &[]);
        assert!(admin.may_write("anything") && admin.has(Scope::Read));
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let t = Tokens::parse(TOML).unwrap();
        assert!(!format!("{t:?}").contains("secret-0123"));
    }
}
