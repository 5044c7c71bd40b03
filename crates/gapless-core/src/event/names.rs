//! Names: what an asset name and an event id may be. Both follow one rule
//! on every backend: at most 512 bytes and no control character.

use crate::error::err;
use crate::parse::invalid;
use crate::{Error, Result};

/// The most bytes of an asset name or an event id.
pub const MAX_NAME_BYTES: usize = 512;

/// Check an asset name: UTF-8 of 1 to 512 bytes without control characters.
///
/// # Errors
///
/// When the name is empty, too long or has a control character.
///
/// # Example
///
/// ```
/// use gapless_core::validate_asset_name;
///
/// assert!(validate_asset_name("s3://lake/orders").is_ok());
/// assert!(validate_asset_name("").is_err());
/// assert!(validate_asset_name("a\nb").is_err());
/// ```
pub fn validate_asset_name(name: &str) -> Result<()> {
    check_name(name).map_err(|reason| invalid("asset name", name, reason))
}

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(err!("empty; an asset name is 1 to 512 bytes of UTF-8"));
    }
    check_length_and_characters(name)
}

/// Check an event id (the producer's idempotency key): a non-empty string
/// of at most 512 bytes without control characters, as an asset name. The
/// message is without the field, as for [`validate_asset_name`].
///
/// A NUL in particular: SQLite would store it, PostgreSQL text cannot, so
/// refusing it here gives every backend the same rule.
pub(crate) fn validate_event_id(id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::new("empty; an id is a non-empty string"));
    }
    check_length_and_characters(id).map_err(|reason| invalid("id", id, reason))
}

/// What asset names and event ids share: at most [`MAX_NAME_BYTES`] bytes
/// and no control character.
fn check_length_and_characters(text: &str) -> Result<()> {
    if text.len() > MAX_NAME_BYTES {
        return Err(err!(
            "{} bytes is longer than the {MAX_NAME_BYTES} allowed",
            text.len()
        ));
    }
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(err!("control character {c:?} is not allowed"));
    }
    Ok(())
}
