//! Judging rules' deadlines by this server's clock (SPEC §7): a window not
//! complete at its end plus its rule's deadline fires `late`.
//!
//! Every replica of a shared ledger runs this; the store's rule locks make
//! each deadline judged once.

use std::time::Duration;

use crate::AppState;

/// How often deadlines are judged: a `late` firing comes at most this long
/// after its deadline.
pub(crate) const DEADLINE_TICK: Duration = Duration::from_secs(1);

/// Judge deadlines every [`DEADLINE_TICK`] until the task is aborted.
pub(crate) async fn judge_forever(state: AppState) {
    let mut tick = tokio::time::interval(DEADLINE_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match state
            .ask(|l| l.judge_deadlines(gapless_ledger::now()))
            .await
        {
            Ok(0) => {}
            Ok(n) => {
                tracing::info!(late = n, "deadlines passed");
                state.changed();
            }
            Err(e) => tracing::warn!(error = %e.message(), "cannot judge deadlines"),
        }
    }
}
