//! clap's argument errors as the one line every other error is (SPEC §3):
//! the flag, then the reason, without clap's tip and usage (`--help` says
//! the rest), so a script's log holds one line per failed run.

use clap::error::{ContextKind, ContextValue, Error, ErrorKind};

/// The line after `gapless: ` for an argument error: `--max-gap: cannot be
/// used with --min-ratio`. clap's own first line, without its `error: `,
/// for a kind whose context says too little to name the flag.
pub fn one_line(e: &Error) -> String {
    named(e).unwrap_or_else(|| {
        let rendered = e.render().to_string();
        let first = rendered.lines().next().unwrap_or_default();
        first.strip_prefix("error: ").unwrap_or(first).to_string()
    })
}

/// The flag a context value names: `--max-gap <MAX_GAP>` is `--max-gap`,
/// the positional `<ASSET>` is `ASSET`.
fn flag(text: &str) -> String {
    let name = text.split(' ').next().unwrap_or(text);
    name.trim_start_matches('<')
        .trim_end_matches('>')
        .to_string()
}

/// The flags (or one) a context value names, joined by `, `.
fn flags(value: &ContextValue) -> Option<String> {
    match value {
        ContextValue::String(s) => Some(flag(s)),
        ContextValue::Strings(v) if !v.is_empty() => {
            Some(v.iter().map(|s| flag(s)).collect::<Vec<_>>().join(", "))
        }
        _ => None,
    }
}

/// The text of a context value that is one string.
fn text(e: &Error, kind: ContextKind) -> Option<&str> {
    match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s),
        _ => None,
    }
}

/// ` (did you mean "x"?)` when clap has a suggestion of `kind`.
fn suggestion(e: &Error, kind: ContextKind) -> String {
    match e.get(kind) {
        Some(ContextValue::String(s)) => format!(" (did you mean {s:?}?)"),
        Some(ContextValue::Strings(v)) if !v.is_empty() => {
            format!(" (did you mean {:?}?)", v.join(" "))
        }
        _ => String::new(),
    }
}

/// The line for the kinds whose context names the flag; `None` for the
/// rest.
fn named(e: &Error) -> Option<String> {
    let arg = || e.get(ContextKind::InvalidArg).and_then(flags);
    let value = || text(e, ContextKind::InvalidValue);
    Some(match e.kind() {
        ErrorKind::ArgumentConflict => {
            let arg = arg()?;
            match e.get(ContextKind::PriorArg).and_then(flags) {
                Some(prior) if prior == arg => format!("{arg}: given more than once"),
                Some(prior) => format!("{arg}: cannot be used with {prior}; give one of them"),
                None => format!("{arg}: cannot be used with the other arguments given"),
            }
        }
        ErrorKind::MissingRequiredArgument => format!("{}: required, not given", arg()?),
        ErrorKind::InvalidValue => {
            let (arg, value) = (arg()?, value()?);
            let valid = match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(v)) if !v.is_empty() => {
                    format!("; give one of {}", v.join(", "))
                }
                _ => String::new(),
            };
            if value.is_empty() {
                format!("{arg}: a value is required{valid}")
            } else {
                format!("{arg}: invalid value {value:?}{valid}")
            }
        }
        ErrorKind::ValueValidation => {
            let (arg, value) = (arg()?, value()?);
            match std::error::Error::source(e) {
                Some(why) => format!("{arg}: invalid value {value:?}: {why}"),
                None => format!("{arg}: invalid value {value:?}"),
            }
        }
        ErrorKind::UnknownArgument => {
            let arg = text(e, ContextKind::InvalidArg)?;
            let what = if arg.starts_with('-') {
                "unknown flag"
            } else {
                "unexpected argument"
            };
            format!("{arg}: {what}{}", suggestion(e, ContextKind::SuggestedArg))
        }
        ErrorKind::InvalidSubcommand => {
            let sub = text(e, ContextKind::InvalidSubcommand)?;
            format!(
                "{sub}: unknown command{}",
                suggestion(e, ContextKind::SuggestedSubcommand)
            )
        }
        ErrorKind::TooManyValues => {
            format!("{}: unexpected value {:?}", arg()?, value()?)
        }
        ErrorKind::NoEquals => format!("{}: give its value after `=`", arg()?),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::flag;

    #[test]
    fn flags_lose_their_value_names() {
        assert_eq!(flag("--max-gap <MAX_GAP>"), "--max-gap");
        assert_eq!(flag("--keys [<FORMAT>]"), "--keys");
        assert_eq!(flag("<ASSET>"), "ASSET");
        assert_eq!(flag("--json"), "--json");
    }
}
