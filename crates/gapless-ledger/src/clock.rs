//! The wall clock, for the one thing that needs it: stamping what the
//! ledger receives. The core has no clock; callers pass the instant in.

use gapless_core::Instant;

/// Now, at microsecond precision.
pub fn now() -> Instant {
    Instant::from_micros(jiff::Timestamp::now().as_microsecond())
        .expect("the clock is within 0001-9999")
}
