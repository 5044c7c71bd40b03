//! `serve --retain D` (SPEC §3): pruning `now - D` when the server starts
//! and every hour after.
//!
//! Every replica of a shared ledger may run this: a prune is bounded
//! deletes of what is still there, so two at once remove each row once
//! and neither blocks writers for longer than one step.

use std::time::Duration;

use gapless_core::Instant;

use crate::AppState;

/// How often the retention prunes: an event is kept at most this much
/// longer than the retention.
pub(crate) const RETENTION_TICK: Duration = Duration::from_secs(3600);

/// Prune `now - retain` at once and every [`RETENTION_TICK`], until the
/// task is aborted.
pub(crate) async fn prune_forever(state: AppState, retain: Duration) {
    let mut tick = tokio::time::interval(RETENTION_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let now = gapless_ledger::now();
        let before = i64::try_from(retain.as_micros())
            .ok()
            .and_then(|d| now.as_micros().checked_sub(d))
            .and_then(|us| Instant::from_micros(us).ok())
            .unwrap_or(Instant::MIN);
        match state.ask(move |l| l.prune_before(before, None)).await {
            Ok(a) => tracing::info!(
                before = %a.before,
                events_removed = a.events_removed,
                firings_removed = a.firings_removed,
                assets_touched = a.assets_touched,
                "retention: pruned"
            ),
            Err(e) => tracing::warn!(error = %e.message(), "retention: cannot prune"),
        }
    }
}
