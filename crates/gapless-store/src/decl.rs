//! Checking what reaches storage without passing the event parser: asset
//! names and declarations, the same for every backend; and reading a
//! stored declaration back.

use gapless_core::{AssetDecl, Duration};

use crate::error::corrupt;
use crate::{Result, StoreError};

/// Check an asset name as SPEC §1 defines it (the core's rule).
pub(crate) fn check_asset_name(asset: &str) -> Result<()> {
    gapless_core::validate_asset_name(asset).map_err(|e| StoreError::Invalid(e.to_string()))
}

/// The stored forms of a declaration, checked: the key span as ISO 8601 and
/// the time zone's IANA name.
pub(crate) fn check_decl(asset: &str, decl: &AssetDecl) -> Result<(Option<String>, String)> {
    check_asset_name(asset)?;
    let tz = decl.tz.iana_name().ok_or_else(|| {
        StoreError::Invalid(format!(
            "time zone of asset {asset:?} must be an IANA time zone such as Europe/Berlin"
        ))
    })?;
    if jiff::tz::TimeZone::get(tz).is_err() {
        return Err(StoreError::Invalid(format!(
            "time zone {tz:?} of asset {asset:?} is not in the time zone database"
        )));
    }
    Ok((decl.key_span.map(|d| d.to_iso8601()), tz.to_string()))
}

/// The declaration of `asset` from its stored forms (`tz` `None`: never
/// declared).
///
/// # Errors
///
/// A fault when the time zone is unknown to this build or the key span is
/// not a duration.
pub(crate) fn stored_decl(
    asset: &str,
    span: Option<String>,
    tz: Option<String>,
) -> Result<Option<AssetDecl>> {
    let Some(tz) = tz else {
        return Ok(None);
    };
    let tz = jiff::tz::TimeZone::get(&tz).map_err(|e| {
        StoreError::backend(
            format!(
                "asset {asset:?} is declared with time zone {tz:?}, which this build does not know"
            ),
            e,
        )
    })?;
    let key_span = span
        .map(|s| Duration::parse(&s).map_err(|_| corrupt(format_args!("key span {s:?}"))))
        .transpose()?;
    Ok(Some(AssetDecl { key_span, tz }))
}
