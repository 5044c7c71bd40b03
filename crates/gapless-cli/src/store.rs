//! The ledger's store at `--db`, opened for the commands that ask it
//! (`run.rs`), serve it and deliver its firings (`deliver.rs`).

use std::sync::Arc;

use gapless_api::Error;

/// What follows `no ledger at PATH`: the commands that create one, so that
/// a first question before any write says what to do.
const HOW_TO_CREATE: &str = "emit, ingest, asset set, rule set or serve create one";

/// The store at `db` (created when `create`).
pub(crate) fn open_store(db: &str, create: bool) -> Result<Arc<dyn gapless_store::Store>, Error> {
    let store = if create {
        gapless_store::open(db)
    } else {
        gapless_store::open_existing(db)
    };
    let store = store.map_err(|e| match e {
        gapless_store::StoreError::Missing { .. } => {
            Error::not_found(format!("{e}: {HOW_TO_CREATE}"))
        }
        other => gapless_ledger::from_open(other),
    })?;
    Ok(Arc::from(store))
}
