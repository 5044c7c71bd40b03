//! `kind = "webhook"`: POST the firing JSON with its identity as
//! `Idempotency-Key` and, with a secret, `X-Gapless-Signature: sha256=<hex
//! HMAC-SHA256 of the body>`.
//!
//! Any 2xx is delivered; 408, 429, 5xx and transport failures are tried
//! again (the receiver deduplicates by the key); any other status (3xx,
//! 4xx) is a refusal: the firing fails at once.

use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::send::{transport, Answer, Job, Sent, Transport};
use crate::targets::Webhook;

/// The signature header's value for `body` under `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256=");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// One attempt.
pub(crate) fn send(agent: &ureq::Agent, w: &Webhook, timeout: Duration, job: &Job<'_>) -> Sent {
    let Some(limit) = job.limit(timeout) else {
        return Transport::out_of_time().sent();
    };
    let body = serde_json::to_vec(job.answer).expect("a firing serializes");
    let agent = w.https.as_ref().map_or(agent, |h| &h.0);
    let mut req = agent
        .post(&w.url)
        .config()
        .timeout_global(Some(limit))
        .build()
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", job.identity);
    if let Some(secret) = &w.secret {
        req = req.header("X-Gapless-Signature", signature(secret, &body));
    }
    match req.send(&body[..]) {
        Ok(resp) => {
            let a = Answer::read(resp);
            if a.is_success() {
                Sent::Delivered
            } else if a.is_transient() {
                Sent::Again(a.describe())
            } else {
                Sent::Refused(a.describe())
            }
        }
        Err(e) => transport(limit, e).sent(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn signature_is_hex_hmac_sha256() {
        // RFC 4231 test case 2.
        assert_eq!(
            super::signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
