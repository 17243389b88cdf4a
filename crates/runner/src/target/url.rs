//! Which URLs the harness talks to, decided in one place: every
//! [`super::HttpTarget`] is made through [`check`], and the CLI makes its
//! target before anything else, so a URL it refuses is bad usage (exit 2)
//! before any request, never a target fault.
//!
//! The rule: plain `http://` with a host (this build has no TLS), on a
//! loopback address (127.0.0.0/8, `::1`, `localhost`) unless remote
//! targets are allowed, since every case wipes the target.

use std::fmt;

/// Why no target can be made for a URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UrlError {
    /// Not an `http://` URL with a host.
    NotHttp(String),
    /// `https://`: this build has no TLS.
    Tls(String),
    /// Not a loopback address, and remote targets were not allowed.
    NotLoopback(String),
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::NotHttp(u) => write!(
                f,
                "{u}: expected an http:// URL such as http://127.0.0.1:8001"
            ),
            UrlError::Tls(u) => write!(
                f,
                "{u}: https is not supported (this build of conform has no TLS); \
                 serve the target over http:// on a loopback address"
            ),
            UrlError::NotLoopback(u) => write!(
                f,
                "{u}: only loopback addresses (127.0.0.0/8, ::1, localhost) are targets; \
                 pass --allow-remote-target to check a server elsewhere (it will be wiped with debug.reset)"
            ),
        }
    }
}

impl std::error::Error for UrlError {}

/// Whether `url` may be a target: `http://` with a host, and on loopback
/// unless `allow_remote`.
pub fn check(url: &str, allow_remote: bool) -> Result<(), UrlError> {
    let parsed = url::Url::parse(url)
        .ok()
        .filter(|u| u.host().is_some())
        .ok_or_else(|| UrlError::NotHttp(url.to_string()))?;
    match parsed.scheme() {
        "http" => {}
        "https" => return Err(UrlError::Tls(url.to_string())),
        _ => return Err(UrlError::NotHttp(url.to_string())),
    }
    if !allow_remote && !is_loopback_url(url) {
        return Err(UrlError::NotLoopback(url.to_string()));
    }
    Ok(())
}

/// Whether a URL's host is a loopback address (127.0.0.0/8, ::1, localhost).
pub fn is_loopback_url(url: &str) -> bool {
    let Ok(u) = url::Url::parse(url) else {
        return false;
    };
    match u.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_on_loopback_only_unless_remote_is_allowed() {
        for ok in [
            "http://127.0.0.1:8001",
            "http://localhost/",
            "http://[::1]:9",
        ] {
            assert_eq!(check(ok, false), Ok(()), "{ok}");
        }
        let remote = "http://192.0.2.1:8001";
        assert!(matches!(
            check(remote, false),
            Err(UrlError::NotLoopback(_))
        ));
        assert_eq!(check(remote, true), Ok(()));
        assert!(matches!(
            check("https://127.0.0.1:8001", true),
            Err(UrlError::Tls(_))
        ));
        for bad in ["ftp://127.0.0.1/", "127.0.0.1:8001", "http://", "nonsense"] {
            assert!(
                matches!(check(bad, true), Err(UrlError::NotHttp(_))),
                "{bad}"
            );
        }
    }
}
