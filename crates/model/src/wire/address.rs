//! The Rust server's deliverable addresses (`transport::parse_address`), the
//! rule behind its 400 for a bad `resonate:target` or listener address. The
//! spec treats addresses as opaque strings.
//!
//! | scheme | valid when |
//! |---|---|
//! | `http://`, `https://` | the authority has a non-empty host |
//! | `poll://` | `uni@group[/id]` or `any@group[/id]`, group non-empty |
//! | `gcps://` | `project/topic`, both non-empty |
//! | `bash:` | always |
//!
//! The server reads addresses with a full URL parser; this small one agrees
//! on every address of the forms above and is stricter on exotic spellings
//! (`http:host` without slashes is refused here).

/// Whether the Rust server would accept `address` as a delivery address.
pub fn is_valid_address(address: &str) -> bool {
    let Some((scheme, rest)) = address.split_once(':') else {
        return false;
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme == "bash" {
        return true;
    }
    let Some(rest) = rest.strip_prefix("//") else {
        return false;
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let (user, host_port) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u.split(':').next().unwrap_or("")), h),
        None => (None, authority),
    };
    let Some(host) = host(host_port) else {
        return false;
    };
    match scheme.as_str() {
        "http" | "https" => !host.is_empty(),
        "poll" => matches!(user, Some("uni" | "any")) && !host.is_empty(),
        "gcps" => {
            let topic = path.split(['?', '#']).next().unwrap_or("");
            !host.is_empty() && topic.len() > 1
        }
        _ => false,
    }
}

/// The host of `host[:port]`, or `None` when the port is not a number or
/// the host has characters no URL host may have.
fn host(host_port: &str) -> Option<&str> {
    let (host, port) = if host_port.starts_with('[') {
        // An IPv6 literal: `[..]` then an optional port.
        let close = host_port.find(']')?;
        let (h, p) = host_port.split_at(close + 1);
        (h, p.strip_prefix(':'))
    } else {
        match host_port.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        }
    };
    if let Some(p) = port {
        if !p.is_empty() && p.parse::<u16>().is_err() {
            return None;
        }
    }
    let bad = |c: char| c.is_whitespace() || c.is_control() || "<>\\^|%".contains(c);
    if host.chars().any(bad) {
        return None;
    }
    Some(host)
}

#[cfg(test)]
mod tests {
    use super::is_valid_address;

    #[test]
    fn accepts_the_servers_forms() {
        for a in [
            "http://localhost:3000",
            "https://example.com/path?q=1",
            "poll://any@default",
            "poll://uni@workers/w1",
            "gcps://project/topic",
            "bash://",
        ] {
            assert!(is_valid_address(a), "{a}");
        }
    }

    #[test]
    fn refuses_the_rest() {
        for a in [
            "",
            "localhost:3000",
            "http://",
            "http://:80",
            "http://host:port",
            "poll://group",
            "poll://all@group",
            "poll://any@",
            "gcps://project",
            "gcps://project/",
            "ftp://host",
            "http://ho st",
        ] {
            assert!(!is_valid_address(a), "{a}");
        }
    }
}
