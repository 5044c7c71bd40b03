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

/// One configured token.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Token {
    /// A label for logs (never the secret).
    #[serde(default)]
    pub name: Option<String>,
    secret: String,
    /// What it may do.
    pub scopes: Vec<Scope>,
    /// The asset-name prefixes it may write; none: every asset.
    #[serde(default)]
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

#[derive(Deserialize)]
#[serde(untagged)]
enum TokensText {
    File {
        #[serde(alias = "tokens")]
        token: Vec<Token>,
    },
    List(Vec<Token>),
}

impl Tokens {
    /// These tokens.
    ///
    /// # Errors
    ///
    /// [`ServerError::Config`] for no tokens, a short or repeated secret, or
    /// a token without scopes.
    pub fn new(tokens: Vec<Token>) -> Result<Tokens, ServerError> {
        let bad = |m: String| Err(ServerError::Config(format!("tokens: {m}")));
        if tokens.is_empty() {
            return bad("no token is configured".into());
        }
        for (i, t) in tokens.iter().enumerate() {
            let which = format!("token {} ({})", i + 1, t.label());
            if t.secret.chars().count() < MIN_SECRET_LEN {
                return bad(format!(
                    "{which}: the secret must have at least {MIN_SECRET_LEN} characters"
                ));
            }
            if t.secret
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
            {
                return bad(format!(
                    "{which}: the secret must not contain spaces or control characters"
                ));
            }
            if t.scopes.is_empty() {
                return bad(format!(
                    "{which}: give at least one scope (read, write, admin)"
                ));
            }
            if tokens[..i].iter().any(|o| o.secret == t.secret) {
                return bad(format!("{which}: the same secret is given twice"));
            }
        }
        Ok(Tokens {
            tokens: tokens.into(),
        })
    }

    /// Parse tokens from TOML (`[[token]]` tables) or JSON (`{"token": [...]}`
    /// or an array).
    ///
    /// # Errors
    ///
    /// [`ServerError::Config`] naming what is wrong.
    pub fn parse(text: &str) -> Result<Tokens, ServerError> {
        let trimmed = text.trim_start();
        // `[[token]]` is TOML; `[{...}]`, `[]` and `{...}` are JSON.
        let after_bracket = trimmed.strip_prefix('[').map(str::trim_start);
        let json = trimmed.starts_with('{')
            || after_bracket.is_some_and(|r| r.starts_with('{') || r.starts_with(']'));
        let parsed: TokensText = if json {
            serde_json::from_str(text)
                .map_err(|e| ServerError::Config(format!("tokens: invalid JSON: {e}")))?
        } else {
            toml::from_str(text).map_err(|e| {
                ServerError::Config(format!("tokens: invalid TOML: {}", e.message().trim()))
            })?
        };
        match parsed {
            TokensText::File { token } | TokensText::List(token) => Tokens::new(token),
        }
    }

    /// Read tokens from the file at `path`.
    ///
    /// # Errors
    ///
    /// [`ServerError::Config`] when the file cannot be read or is invalid.
    pub fn load(path: &Path) -> Result<Tokens, ServerError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ServerError::Config(format!("cannot read tokens file {}: {e}", path.display()))
        })?;
        Tokens::parse(&text).map_err(|e| ServerError::Config(format!("{}: {e}", path.display())))
    }

    /// Tokens from `GAPLESS_TOKENS` (the text) or `GAPLESS_TOKENS_FILE` (a
    /// path), or `None` when neither is set.
    ///
    /// # Errors
    ///
    /// [`ServerError::Config`] when the tokens given are invalid.
    pub fn from_env() -> Result<Option<Tokens>, ServerError> {
        if let Some(text) = std::env::var_os(TOKENS_ENV) {
            let text = text
                .into_string()
                .map_err(|_| ServerError::Config(format!("{TOKENS_ENV} is not UTF-8")))?;
            return Tokens::parse(&text)
                .map(Some)
                .map_err(|e| ServerError::Config(format!("{TOKENS_ENV}: {e}")));
        }
        match std::env::var_os(TOKENS_FILE_ENV) {
            Some(path) => Tokens::load(Path::new(&path)).map(Some),
            None => Ok(None),
        }
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

    /// Allow only a caller that may write `asset`.
    ///
    /// # Errors
    ///
    /// 403 naming the asset.
    pub fn require_write(&self, asset: &str) -> Result<(), String> {
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
                    format!("this token may not write asset {asset:?}: it is outside the token's prefixes")
                } else {
                    "this token does not have the write scope".to_string()
                })
            }
        }
    }
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
                "invalid JSON",
            ),
            ("[[token]]\nsecret = 1", "invalid TOML"),
            (
                r#"[{"secret": "0123456789abcdef", "scopes": ["read"]}, {"secret": "0123456789abcdef", "scopes": ["admin"]}]"#,
                "twice",
            ),
        ] {
            let e = Tokens::parse(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
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
