//! Readable output of the rule commands (SPEC §7): a rule as a short
//! description, firings as an aligned table.

use std::fmt::Write;

use gapless_api::{
    FiringsAnswer, RuleAnswer, RuleDeletedAnswer, RuleOutcome, RuleSetAnswer, RuleWindowsAnswer,
    RulesAnswer,
};

fn describe(out: &mut String, r: &RuleAnswer) {
    let _ = writeln!(
        out,
        "rule {}: every {} in {} of {} ({}), from {}{}",
        r.rule,
        r.every,
        r.tz,
        r.assets.join(", "),
        r.policy,
        r.from,
        r.until.map(|u| format!(" until {u}")).unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "  target {}, deadline {}, keys {}",
        r.target.as_deref().unwrap_or("none"),
        r.deadline.as_deref().unwrap_or("none"),
        r.key_format
    );
}

pub fn rule_set(a: &RuleSetAnswer) -> String {
    let mut out = String::new();
    let done = match a.outcome {
        RuleOutcome::Created => format!(
            "created; {} {} already complete fired",
            a.firings,
            if a.firings == 1 { "window" } else { "windows" }
        ),
        RuleOutcome::Updated => "updated (new settings)".to_string(),
        RuleOutcome::Unchanged => "unchanged".to_string(),
    };
    describe(&mut out, &a.rule);
    let _ = writeln!(out, "  {done}");
    out
}

pub fn rule(a: &RuleAnswer) -> String {
    let mut out = String::new();
    describe(&mut out, a);
    out
}

pub fn rules(a: &RulesAnswer) -> String {
    if a.rules.is_empty() {
        return "no rules\n".into();
    }
    let mut out = String::new();
    for r in &a.rules {
        describe(&mut out, r);
    }
    if let Some(next) = &a.next {
        let _ = writeln!(out, "more: --after {next}");
    }
    out
}

pub fn rule_deleted(a: &RuleDeletedAnswer) -> String {
    format!("rule {} deleted, with its firings\n", a.rule)
}

pub fn firings(a: &FiringsAnswer) -> String {
    let mut out = String::new();
    if a.firings.is_empty() {
        out.push_str("no firings\n");
    } else {
        let _ = writeln!(
            out,
            "{:>6}  {:<20} {:<10} {:<22} {:>4} {:>8}  delivery",
            "seq", "rule", "kind", "key", "gen", "covered"
        );
        for f in &a.firings {
            let delivery = match &f.delivery.target {
                Some(t) => format!("{} to {t}", f.delivery.state),
                None => f.delivery.state.clone(),
            };
            let _ = writeln!(
                out,
                "{:>6}  {:<20} {:<10} {:<22} {:>4} {:>7.3}%  {}",
                f.seq,
                f.rule,
                f.kind.as_str(),
                f.key,
                f.generation,
                (f.covered_ratio * 100_000.0).floor() / 1000.0,
                delivery
            );
        }
    }
    if let Some(next) = a.next {
        let _ = writeln!(out, "more: --after {next}");
    }
    out
}

/// `rule windows`: the rule's windows as `windows` shows an asset's.
pub fn rule_windows(a: &RuleWindowsAnswer) -> String {
    let subject = format!("rule {} ({})", a.rule, a.assets.join(", "));
    crate::human::windows_table(&subject, &a.every, &a.tz, &a.policy, &a.windows)
}
