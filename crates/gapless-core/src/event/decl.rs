//! What an asset declares about itself.

use crate::Duration;

/// What an asset declares about itself: the span of a discrete key and the
/// time zone its keys and bare dates are read in.
#[derive(Debug, Clone)]
pub struct AssetDecl {
    /// `[key, key + span)` for a discrete `partition_key`.
    pub key_span: Option<Duration>,
    /// Time zone of the asset.
    pub tz: jiff::tz::TimeZone,
}
