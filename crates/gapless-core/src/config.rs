//! Configuration files (the server's tokens, the deliverer's targets) read
//! through serde: the text parsed as TOML or JSON into a [`ConfigValue`],
//! then deserialized into the reader's `#[derive(Deserialize)]` types, every
//! problem a [`ConfigError`] holding the path to the bad value and what is
//! wrong with it, for the reader to put in one line naming its entry and
//! field.
//!
//! serde's own errors for TOML and JSON name neither the entry nor the field
//! and call values by Rust's names (`invalid type: integer`, a TOML date-time
//! is a `map`); deserializing from a [`ConfigValue`] keeps what each value is
//! called in the file's own syntax (`an integer`, `a date-time`, `an object`)
//! and the path to it.

use std::fmt;

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, Expected, IntoDeserializer, Unexpected, Visitor};

/// The syntax a configuration text is in; messages use its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSyntax {
    /// TOML: tables, integers, date-times.
    Toml,
    /// JSON: objects, numbers, null.
    Json,
}

impl ConfigSyntax {
    /// What a table (TOML) or an object (JSON) is called.
    pub fn table(self) -> &'static str {
        match self {
            ConfigSyntax::Toml => "a table",
            ConfigSyntax::Json => "an object",
        }
    }

    fn integer(self) -> &'static str {
        match self {
            ConfigSyntax::Toml => "an integer",
            ConfigSyntax::Json => "a number",
        }
    }
}

/// A TOML or JSON value reduced to what configuration files hold: strings,
/// integers, arrays and tables (in the file's order), and for anything else
/// what it is called.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigValue {
    /// A string.
    Str(String),
    /// A whole number.
    Int(i64),
    /// An array.
    Array(Vec<ConfigValue>),
    /// A table (TOML) or object (JSON): its keys and values.
    Table(Vec<(String, ConfigValue)>),
    /// Anything else, by its name in the file's syntax (`a float`, `a
    /// date-time`, `null`).
    Other(&'static str),
}

impl From<toml::Value> for ConfigValue {
    fn from(v: toml::Value) -> ConfigValue {
        match v {
            toml::Value::String(s) => ConfigValue::Str(s),
            toml::Value::Integer(i) => ConfigValue::Int(i),
            toml::Value::Array(a) => ConfigValue::Array(a.into_iter().map(Into::into).collect()),
            toml::Value::Table(t) => {
                ConfigValue::Table(t.into_iter().map(|(k, v)| (k, v.into())).collect())
            }
            toml::Value::Float(_) => ConfigValue::Other("a float"),
            toml::Value::Boolean(_) => ConfigValue::Other("a boolean"),
            toml::Value::Datetime(_) => ConfigValue::Other("a date-time"),
        }
    }
}

impl From<serde_json::Value> for ConfigValue {
    fn from(v: serde_json::Value) -> ConfigValue {
        match v {
            serde_json::Value::String(s) => ConfigValue::Str(s),
            serde_json::Value::Number(n) => n
                .as_i64()
                .map_or(ConfigValue::Other("a number"), ConfigValue::Int),
            serde_json::Value::Array(a) => {
                ConfigValue::Array(a.into_iter().map(Into::into).collect())
            }
            serde_json::Value::Object(o) => {
                ConfigValue::Table(o.into_iter().map(|(k, v)| (k, v.into())).collect())
            }
            serde_json::Value::Bool(_) => ConfigValue::Other("a boolean"),
            serde_json::Value::Null => ConfigValue::Other("null"),
        }
    }
}

impl ConfigValue {
    /// Parse a TOML document.
    ///
    /// # Errors
    ///
    /// [`ConfigProblem::Syntax`]: `invalid TOML at line N: ...`, one line.
    pub fn from_toml(text: &str) -> Result<ConfigValue, ConfigError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let message = e.message().trim().replace('\n', "; ");
            ConfigError::from(ConfigProblem::Syntax(match line {
                Some(n) => format!("invalid TOML at line {n}: {message}"),
                None => format!("invalid TOML: {message}"),
            }))
        })?;
        Ok(toml::Value::Table(table).into())
    }

    /// Parse a JSON document.
    ///
    /// # Errors
    ///
    /// [`ConfigProblem::Syntax`]: `invalid JSON: ... at line N column M`.
    pub fn from_json(text: &str) -> Result<ConfigValue, ConfigError> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| ConfigProblem::Syntax(format!("invalid JSON: {e}")))?;
        Ok(value.into())
    }

    /// What this is called in `syntax`: `a string`, `an integer`, `a table`.
    pub fn kind(&self, syntax: ConfigSyntax) -> &'static str {
        Found::of(self).word(syntax)
    }

    /// The value of `key`, when this is a table that has it.
    pub fn get(&self, key: &str) -> Option<&ConfigValue> {
        match self {
            ConfigValue::Table(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at `path` from here.
    pub fn at(&self, path: &[ConfigStep]) -> Option<&ConfigValue> {
        path.iter().try_fold(self, |v, step| match (v, step) {
            (ConfigValue::Array(items), ConfigStep::Index(i)) => items.get(*i),
            (_, ConfigStep::Key(k)) => v.get(k),
            _ => None,
        })
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            ConfigValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// This value as a `T`.
    ///
    /// # Errors
    ///
    /// The first value that `T` does not take, with its path from here and
    /// what it is called in `syntax`.
    pub fn deserialize<T: DeserializeOwned>(&self, syntax: ConfigSyntax) -> Result<T, ConfigError> {
        serde_path_to_error::deserialize(De(self)).map_err(|e| {
            let path = e
                .path()
                .iter()
                .filter_map(|s| match s {
                    serde_path_to_error::Segment::Seq { index } => Some(ConfigStep::Index(*index)),
                    serde_path_to_error::Segment::Map { key } => Some(ConfigStep::Key(key.clone())),
                    _ => None,
                })
                .collect();
            let problem = match e.into_inner() {
                Fault::UnknownField(field, expected) => {
                    ConfigProblem::UnknownField { field, expected }
                }
                Fault::Missing(field) => ConfigProblem::Missing(field),
                Fault::Type { found, expected } => ConfigProblem::Type {
                    found: found.word(syntax),
                    expected,
                },
                Fault::Variant(variant, expected) => {
                    ConfigProblem::UnknownVariant { variant, expected }
                }
                Fault::Custom(message) => ConfigProblem::Other(message),
            };
            ConfigError { path, problem }
        })
    }
}

/// One step of the path to a value: a table's key or an array's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigStep {
    /// The value of this key.
    Key(String),
    /// The item at this index (from 0).
    Index(usize),
}

/// What is wrong with a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigProblem {
    /// The text is not TOML or JSON: the whole one-line message.
    #[error("{0}")]
    Syntax(String),
    /// A key the table does not take.
    #[error("unknown field {field:?}")]
    UnknownField {
        /// The key.
        field: String,
        /// The keys the table takes, in the reader's order.
        expected: &'static [&'static str],
    },
    /// A key the table needs.
    #[error("{0} is missing")]
    Missing(&'static str),
    /// A value of the wrong kind.
    #[error("expected {expected}, found {found}")]
    Type {
        /// What the reader's type takes, in serde's words (`a string`).
        expected: String,
        /// What the value is, in the file's syntax (`an integer`).
        found: &'static str,
    },
    /// A string that is none of the names a field takes.
    #[error("unknown value {variant:?}")]
    UnknownVariant {
        /// The string.
        variant: String,
        /// The names taken.
        expected: &'static [&'static str],
    },
    /// Anything else the reader's type refused.
    #[error("{0}")]
    Other(String),
}

/// A problem and where it is; shown as `backoff.base: expected ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The path to the value from the one deserialized (to the table for a
    /// missing key).
    pub path: Vec<ConfigStep>,
    /// What is wrong.
    pub problem: ConfigProblem,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field(0) {
            field if field.is_empty() => write!(f, "{}", self.problem),
            field => write!(f, "{field}: {}", self.problem),
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<ConfigProblem> for ConfigError {
    fn from(problem: ConfigProblem) -> ConfigError {
        ConfigError {
            path: Vec::new(),
            problem,
        }
    }
}

impl ConfigError {
    /// The keys of the path, dotted (`backoff.base`), after the first
    /// `skip` steps (an entry's place in its file).
    pub fn field(&self, skip: usize) -> String {
        let keys: Vec<&str> = self
            .path
            .iter()
            .skip(skip)
            .filter_map(|s| match s {
                ConfigStep::Key(k) => Some(k.as_str()),
                ConfigStep::Index(_) => None,
            })
            .collect();
        keys.join(".")
    }

    /// Whether the value is an item of an array (`scopes = [1]`) rather than
    /// a field's value itself.
    pub fn in_item(&self) -> bool {
        matches!(self.path.last(), Some(ConfigStep::Index(_)))
    }
}

/// `token 2` or `token 2 ("ci")`: an entry of a file, 1-based as people
/// count, with its name when it has one.
pub fn config_entry(noun: &str, index: usize, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("{noun} {} ({n:?})", index + 1),
        None => format!("{noun} {}", index + 1),
    }
}

/// What a value was found to be, worded once the syntax is known.
#[derive(Debug)]
enum Found {
    Str,
    Int,
    Array,
    Table,
    Named(&'static str),
    Unexpected,
}

impl Found {
    fn of(v: &ConfigValue) -> Found {
        match v {
            ConfigValue::Str(_) => Found::Str,
            ConfigValue::Int(_) => Found::Int,
            ConfigValue::Array(_) => Found::Array,
            ConfigValue::Table(_) => Found::Table,
            ConfigValue::Other(what) => Found::Named(what),
        }
    }

    fn word(&self, syntax: ConfigSyntax) -> &'static str {
        match self {
            Found::Str => "a string",
            Found::Int => syntax.integer(),
            Found::Array => "an array",
            Found::Table => syntax.table(),
            Found::Named(what) => what,
            // Only the kinds above are ever visited; a visitor's own
            // complaint is worded generally.
            Found::Unexpected => "another kind of value",
        }
    }
}

/// serde's errors, kept as data until the syntax is known.
#[derive(Debug)]
enum Fault {
    UnknownField(String, &'static [&'static str]),
    Missing(&'static str),
    Type { found: Found, expected: String },
    Variant(String, &'static [&'static str]),
    Custom(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Fault {}

impl de::Error for Fault {
    fn custom<T: fmt::Display>(msg: T) -> Fault {
        Fault::Custom(msg.to_string())
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn Expected) -> Fault {
        let found = match unexp {
            Unexpected::Str(_) => Found::Str,
            Unexpected::Signed(_) | Unexpected::Unsigned(_) => Found::Int,
            Unexpected::Seq => Found::Array,
            Unexpected::Map => Found::Table,
            _ => Found::Unexpected,
        };
        Fault::Type {
            found,
            expected: exp.to_string(),
        }
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn Expected) -> Fault {
        Fault::Custom(format!("invalid value {unexp}: expected {exp}"))
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Fault {
        Fault::Variant(variant.to_string(), expected)
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Fault {
        Fault::UnknownField(field.to_string(), expected)
    }

    fn missing_field(field: &'static str) -> Fault {
        Fault::Missing(field)
    }
}

/// A [`ConfigValue`] as a serde deserializer.
struct De<'a>(&'a ConfigValue);

impl<'de, 'a> IntoDeserializer<'de, Fault> for &'a ConfigValue {
    type Deserializer = De<'a>;

    fn into_deserializer(self) -> De<'a> {
        De(self)
    }
}

impl<'de> de::Deserializer<'de> for De<'_> {
    type Error = Fault;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Fault> {
        match self.0 {
            ConfigValue::Str(s) => visitor.visit_str(s),
            ConfigValue::Int(i) => visitor.visit_i64(*i),
            ConfigValue::Array(items) => visitor.visit_seq(SeqDeserializer::new(items.iter())),
            ConfigValue::Table(entries) => visitor.visit_map(MapDeserializer::new(
                entries.iter().map(|(k, v)| (k.as_str(), v)),
            )),
            ConfigValue::Other(what) => Err(Fault::Type {
                found: Found::Named(what),
                expected: ExpectedText(&visitor).to_string(),
            }),
        }
    }

    /// Present is `Some`, whatever the value: a JSON `null` is refused as
    /// the field's type refuses it, as a TOML file has no null.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Fault> {
        visitor.visit_some(self)
    }

    /// A string names a unit variant (`scopes = ["read"]`).
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Fault> {
        match self.0 {
            ConfigValue::Str(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            _ => self.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple tuple_struct
        map struct identifier ignored_any
    }
}

/// A visitor's `expecting` as text.
struct ExpectedText<'a, V>(&'a V);

impl<'de, V: Visitor<'de>> fmt::Display for ExpectedText<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        name: String,
        #[serde(default)]
        sizes: Vec<i64>,
        mode: Option<Mode>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Fast,
    }

    fn toml_err(text: &str) -> ConfigError {
        let v = ConfigValue::from_toml(text).unwrap();
        v.get("e")
            .unwrap()
            .deserialize::<Entry>(ConfigSyntax::Toml)
            .unwrap_err()
    }

    #[test]
    fn reads_typed_values() {
        let v =
            ConfigValue::from_toml("[e]\nname = \"x\"\nsizes = [1, 2]\nmode = \"fast\"").unwrap();
        let e: Entry = v.get("e").unwrap().deserialize(ConfigSyntax::Toml).unwrap();
        let path = [
            ConfigStep::Key("e".into()),
            ConfigStep::Key("sizes".into()),
            ConfigStep::Index(1),
        ];
        assert_eq!(v.at(&path), Some(&ConfigValue::Int(2)));
        assert_eq!(
            v.at(&path[..1]).and_then(|e| e.get("name")?.as_str()),
            Some("x")
        );
        assert_eq!(
            e,
            Entry {
                name: "x".into(),
                sizes: vec![1, 2],
                mode: Some(Mode::Fast)
            }
        );
        let j = ConfigValue::from_json(r#"{"name": "y"}"#).unwrap();
        assert_eq!(
            j.deserialize::<Entry>(ConfigSyntax::Json).unwrap().sizes,
            Vec::<i64>::new()
        );
    }

    #[test]
    fn problems_keep_their_path_and_the_files_words() {
        let e = toml_err("[e]\nname = 1979-05-27T07:32:00Z");
        assert_eq!(e.path, [ConfigStep::Key("name".into())]);
        assert_eq!(
            e.problem,
            ConfigProblem::Type {
                expected: "a string".into(),
                found: "a date-time"
            }
        );
        let e = toml_err("[e]\nname = \"x\"\nsizes = [1, \"2\"]");
        assert_eq!((e.field(0), e.in_item()), ("sizes".into(), true));
        assert!(
            matches!(
                e.problem,
                ConfigProblem::Type {
                    found: "a string",
                    ..
                }
            ),
            "{e:?}"
        );
        let e = toml_err("[e]\nname = \"x\"\ncolor = 1");
        assert_eq!(
            e.problem,
            ConfigProblem::UnknownField {
                field: "color".into(),
                expected: &["name", "sizes", "mode"]
            }
        );
        let e = toml_err("[e]\nsizes = []");
        assert_eq!(
            (e.path.len(), e.problem),
            (0, ConfigProblem::Missing("name"))
        );
        let e = toml_err("[e]\nname = \"x\"\nmode = \"slow\"");
        assert_eq!(
            e.problem,
            ConfigProblem::UnknownVariant {
                variant: "slow".into(),
                expected: &["fast"]
            }
        );
        let e = toml_err("[e]\nname = {a = 1}");
        assert!(
            matches!(
                e.problem,
                ConfigProblem::Type {
                    found: "a table",
                    ..
                }
            ),
            "{e:?}"
        );

        let j = ConfigValue::from_json(r#"{"name": {"a": null}}"#).unwrap();
        let e = j.deserialize::<Entry>(ConfigSyntax::Json).unwrap_err();
        assert!(
            matches!(
                e.problem,
                ConfigProblem::Type {
                    found: "an object",
                    ..
                }
            ),
            "{e:?}"
        );
        let j = ConfigValue::from_json(r#"{"name": "x", "sizes": [null]}"#).unwrap();
        let e = j.deserialize::<Entry>(ConfigSyntax::Json).unwrap_err();
        assert!(
            matches!(e.problem, ConfigProblem::Type { found: "null", .. }),
            "{e:?}"
        );
    }

    #[test]
    fn syntax_errors_are_one_line() {
        let e = ConfigValue::from_toml("a = [1,\n").unwrap_err().to_string();
        assert!(e.starts_with("invalid TOML at line "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = ConfigValue::from_json("{\"a\": 1,}")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("invalid JSON: trailing comma"), "{e}");
    }
}
