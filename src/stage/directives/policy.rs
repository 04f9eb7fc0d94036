//! The URL and path policy for media items (SPEC §2): which references the engine may send.
//!
//! - `https://` URLs whose host is public: not `localhost` (or under it), no IP literal that
//!   is loopback, private, link-local, shared (CGNAT), unspecified, multicast, documentation
//!   or otherwise reserved, not a single label, not under `.local` or `.internal`, not a cloud
//!   metadata name, ASCII host characters only (punycode for international names), no
//!   userinfo. Any other URL (`http://`, a private host) is not media: it stays as text.
//! - Local paths that start with `/`, `./`, `~/` or a drive (`C:\`, `C:/`), with no `..`
//!   component and no control character. A path that is not allowed (it traverses, or starts
//!   with `../`) is removed from the text and not sent.
//! - Anything else (a bare file name, a relative path, a `file://` URL) is not media.

use std::net::{Ipv4Addr, Ipv6Addr};

/// What to do with one media item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// An allowed URL or local path: send it.
    Send,
    /// A local path that is not allowed: remove it, send nothing.
    Drop,
    /// Not media (or a URL that is not allowed): leave it as text.
    Keep,
}

pub(crate) fn classify(item: &str) -> Verdict {
    let item = item.trim_matches([' ', '\t']);
    if has_prefix_ignore_case(item, "https://") {
        return if is_allowed_media_url(item) {
            Verdict::Send
        } else {
            Verdict::Keep
        };
    }
    match is_allowed_local_path(item) {
        Some(true) => Verdict::Send,
        Some(false) => Verdict::Drop,
        None => Verdict::Keep,
    }
}

pub(crate) fn has_prefix_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn has_suffix_ignore_case(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.as_bytes()[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// Whether `item` starts the way an allowed local path starts: `/`, `./`, `~/`, or a drive
/// letter and `:\` or `:/`.
pub(crate) fn starts_like_path(item: &str) -> bool {
    let b = item.as_bytes();
    let drive =
        b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/');
    item.starts_with('/') || item.starts_with("./") || item.starts_with("~/") || drive
}

/// Whether `item` looks like a local path (`Some`), and if so whether it is allowed: it
/// starts like one (see [`starts_like_path`]), has no `..` component and no
/// control character. `../x` is a path that is not allowed.
pub(crate) fn is_allowed_local_path(item: &str) -> Option<bool> {
    let path_like = starts_like_path(item) || item.starts_with("../") || item.starts_with("..\\");
    if !path_like {
        return None;
    }
    let traversal = item.split(['/', '\\']).any(|part| part == "..");
    Some(!traversal && !item.chars().any(char::is_control))
}

/// Whether `url` is an `https://` URL that may be fetched and sent: no userinfo, a host that
/// is public — not `localhost` (or under it), not an IP literal that is loopback, private,
/// link-local, shared (CGNAT), unspecified, multicast, documentation or otherwise reserved,
/// not a single label, not under `.local` or `.internal`, not a cloud metadata name — and
/// only ASCII hostname characters (international names must be in punycode). A host whose
/// last label is numeric must be a plain dotted-quad IPv4 address (no `127.1`, `0x7f.1`).
pub(crate) fn is_allowed_media_url(url: &str) -> bool {
    if !has_prefix_ignore_case(url, "https://")
        || url.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return false;
    }
    let rest = &url["https://".len()..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    if authority.contains(['@', '\\']) {
        return false;
    }
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let Some(close) = inner.find(']') else {
            return false;
        };
        let Ok(ip) = inner[..close].parse::<Ipv6Addr>() else {
            return false;
        };
        if !is_public_ipv6(ip) {
            return false;
        }
        (None, &inner[close + 1..])
    } else {
        match authority.find(':') {
            Some(colon) => (Some(&authority[..colon]), &authority[colon..]),
            None => (Some(authority), ""),
        }
    };
    if !port.is_empty() {
        let Some(digits) = port.strip_prefix(':') else {
            return false;
        };
        if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    host.is_none_or(is_public_hostname)
}

/// Host names that answer with cloud instance metadata.
const METADATA_HOSTS: [&str; 4] = [
    "metadata.google.internal",
    "metadata.goog",
    "metadata.tencentyun.com",
    "instance-data.ec2.internal",
];

fn is_public_hostname(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.is_empty()
        || host.len() > 253
        || !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
    {
        return false;
    }
    if host
        .split('.')
        .any(|label| label.is_empty() || label.len() > 63)
    {
        return false;
    }
    let Some((_, last)) = host.rsplit_once('.') else {
        return false; // a single label
    };
    let numeric_last =
        last.bytes().all(|b| b.is_ascii_digit()) || has_prefix_ignore_case(last, "0x");
    if numeric_last {
        return host.parse::<Ipv4Addr>().is_ok_and(is_public_ipv4);
    }
    let private_suffix = [".localhost", ".local", ".internal"]
        .iter()
        .any(|s| has_suffix_ignore_case(host, s));
    !private_suffix && !METADATA_HOSTS.iter().any(|m| m.eq_ignore_ascii_case(host))
}

fn is_public_ipv4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let reserved = a == 0
        || a == 10
        || a == 127
        || (a == 100 && (64..=127).contains(&b)) // shared address space (CGNAT, Alibaba metadata)
        || (a == 169 && b == 254) // link-local, cloud metadata
        || (a == 172 && (16..=31).contains(&b))
        || (a == 192 && b == 168)
        || (a == 192 && b == 0 && (c == 0 || c == 2)) // IETF assignments, documentation
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // documentation
        || (a == 203 && b == 0 && c == 113) // documentation
        || a >= 224; // multicast, reserved, broadcast
    !reserved
}

fn is_public_ipv6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_ipv4(v4);
    }
    let s = ip.segments();
    // Only global unicast (2000::/3) is public; that excludes loopback, unspecified,
    // unique-local (fc00::/7, where AWS metadata lives), link-local, multicast, NAT64.
    let global = (s[0] & 0xe000) == 0x2000;
    let documentation = s[0] == 0x2001 && s[1] == 0x0db8;
    let teredo = s[0] == 0x2001 && s[1] == 0;
    let six_to_four_private = s[0] == 0x2002 && {
        let [a, b] = s[1].to_be_bytes();
        let [c, d] = s[2].to_be_bytes();
        !is_public_ipv4(Ipv4Addr::new(a, b, c, d))
    };
    global && !documentation && !teredo && !six_to_four_private
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for bad in [
            "https://localhost/a.png",
            "https://foo.localhost/a.png",
            "https://localhost../a.png",
            "https://127.0.0.1/a.png",
            "https://127.0.0.1../a.png",
            "https://10.1.2.3/a.png",
            "https://172.16.0.1/a.png",
            "https://192.168.1.1/a.png",
            "https://169.254.169.254/latest/meta-data",
            "https://100.100.100.200/x",
            "https://0.0.0.0/x",
            "https://127.1/x",
            "https://0x7f.0.0.1/x",
            "https://2130706433.0/x",
            "https://[::1]/x",
            "https://[fe80::1]/x",
            "https://[fd00::1]/a.png",
            "https://[fd00:ec2::254]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://[::ffff:10.0.0.1]/x",
            "https://[64:ff9b::169.254.169.254]/a.png",
            "https://printer.local/x",
            "https://media.local/a.png",
            "https://db.internal/x",
            "https://metadata.google.internal/computeMetadata/v1/",
            "https://metadata.google.internal../a.png",
            "https://metadata.goog/x",
            "https://intranet/x",
            "https://printer/a.png",
            "https://example..com/a.png",
            "https://user:pw@example.com/x",
            "https://user@example.com/x",
            "https://example.com:abc/x",
            "https://exa mple.com/x",
            "https://bücher.de/x",
            "http://example.com/a.png",
            "https:///x",
            "https://",
        ] {
            assert!(!is_allowed_media_url(bad), "{bad}");
            assert_eq!(classify(bad), Verdict::Keep, "{bad}");
        }
        for good in [
            "https://example.com/a.png",
            "https://EXAMPLE.com./a.png",
            "https://cdn.example.com:8443/a.png?x=1#f",
            "https://8.8.8.8/a.png",
            "https://[2606:4700::1111]/a.png",
            "https://[2001:4860:4860::8888]/a.png",
            "https://xn--bcher-kva.de/x",
            "HTTPS://example.com",
        ] {
            assert!(is_allowed_media_url(good), "{good}");
            assert_eq!(classify(good), Verdict::Send, "{good}");
        }
    }

    #[test]
    fn paths() {
        for good in [
            "/tmp/a.png",
            "./out/2.png",
            "~/Pictures/My File.png",
            "C:\\Users\\me\\a.png",
            "D:/safe/second.png",
            "/tmp/render,final.png",
            "/Users/pete/My Files/Project Assets/render final.png",
        ] {
            assert_eq!(classify(good), Verdict::Send, "{good}");
        }
        for bad in [
            "../../../etc/passwd",
            "../../.env",
            "~/Pictures/../../.ssh/id_rsa",
            "./foo/../../../etc/shadow",
            "C:\\Users\\First Last\\..\\secret.png",
            "/tmp/project screenshots/../../.env",
            "/srv/../etc/shadow",
            "/tmp/a\u{7}.png",
        ] {
            assert_eq!(classify(bad), Verdict::Drop, "{bad}");
        }
        for text in [
            "image.png",
            "media/a.png",
            "~user/Pictures/x.png",
            "file:///tmp/a.png",
            "screenshot",
            "",
        ] {
            assert_eq!(classify(text), Verdict::Keep, "{text}");
        }
    }
}
