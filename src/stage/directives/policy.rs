//! The policy for media references written by the model (SPEC §17): which may be sent,
//! and what happens to the others. The rules are documented on
//! [`MediaPolicy`]; here is how an item is sorted.
//!
//! - `https://` (and `http://` while allowed) URLs to a public host: sent. A URL that is not
//!   allowed, or one of another scheme, is refused and stays as text.
//! - `file://` URLs and local paths (`/`, `\\`, `./`, `../`, `~`, a drive `C:\` or `C:/`):
//!   sent, resolved lexically (see [`super::paths`]), when inside a configured root;
//!   otherwise refused and removed from the text, so that no host path reaches the chat.
//! - Anything else (a bare file name, words) is not a reference: it stays as text.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

use super::paths::{file_url_path, parse_absolute, starts_with_drive};
use crate::config::MediaPolicy;

/// What to do with one media item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict<'a> {
    /// An allowed reference: send this (a URL as written, a path resolved).
    Send(Cow<'a, str>),
    /// A local reference that is not allowed: remove it, send nothing.
    Drop,
    /// A URL that is not allowed: leave it as text.
    Refused,
    /// Not a media reference: leave it as text.
    Keep,
}

impl Verdict<'_> {
    /// Whether the reference was refused (counted in the engine's stats).
    pub(crate) fn is_refused(&self) -> bool {
        matches!(self, Verdict::Drop | Verdict::Refused)
    }
}

/// Sorts one item of a `MEDIA:` line or a `[[media:…]]` value under `policy`.
pub(crate) fn classify<'a>(item: &'a str, policy: &MediaPolicy) -> Verdict<'a> {
    let item = item.trim_matches([' ', '\t']);
    let web = has_prefix_ignore_case(item, "https://")
        || (policy.allow_http && has_prefix_ignore_case(item, "http://"));
    if web {
        return if is_allowed_media_url(item) {
            Verdict::Send(Cow::Borrowed(item))
        } else {
            Verdict::Refused
        };
    }
    if has_prefix_ignore_case(item, "file:") {
        return match file_url_path(item) {
            Some(path) => {
                local_verdict(&path, policy).map_or(Verdict::Drop, |p| Verdict::Send(Cow::Owned(p)))
            }
            None => Verdict::Drop,
        };
    }
    if has_scheme(item) {
        return Verdict::Refused;
    }
    if !is_path_like(item) {
        return Verdict::Keep;
    }
    match local_verdict(item, policy) {
        Some(path) if path == item => Verdict::Send(Cow::Borrowed(item)),
        Some(path) => Verdict::Send(Cow::Owned(path)),
        None => Verdict::Drop,
    }
}

/// The resolved form of `path` when it lies inside one of `policy`'s roots.
fn local_verdict(path: &str, policy: &MediaPolicy) -> Option<String> {
    if policy.roots.is_empty() {
        return None;
    }
    let path = parse_absolute(path, true).ok()?;
    policy
        .roots
        .iter()
        .filter_map(|root| parse_absolute(root, false).ok())
        .any(|root| path.is_inside(&root))
        .then(|| path.render())
}

/// Whether `item` starts with `scheme:` followed by `//` (a URL of any scheme).
fn has_scheme(item: &str) -> bool {
    let Some(colon) = item.find(':') else {
        return false;
    };
    let scheme = &item[..colon];
    !scheme.is_empty()
        && scheme.as_bytes()[0].is_ascii_alphabetic()
        && scheme
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
        && item[colon..].starts_with("://")
}

pub(crate) fn has_prefix_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn has_suffix_ignore_case(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.as_bytes()[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// Whether `item` starts the way a local path starts where `MEDIA:` items are split: `/`,
/// `./`, `~/`, or a drive letter and `:\` or `:/`.
pub(crate) fn starts_like_path(item: &str) -> bool {
    item.starts_with('/')
        || item.starts_with("./")
        || item.starts_with("~/")
        || starts_with_drive(item)
}

/// Whether `item` is meant as a local path, allowed or not: it starts like one, or with
/// `../`, `.\`, `..\`, `\` or `~` (a home directory, `~user/`).
fn is_path_like(item: &str) -> bool {
    starts_like_path(item)
        || item.starts_with(['\\', '~'])
        || item.starts_with("../")
        || item.starts_with(".\\")
        || item.starts_with("..\\")
}

/// Whether `url` is an `https://` or `http://` URL that may be fetched and sent: no
/// userinfo, a host that is public — not `localhost` (or under it), not an IP literal that
/// is loopback, private, link-local, shared (CGNAT), unspecified, multicast, documentation
/// or otherwise reserved, not a single label (which also refuses `2130706433` and
/// `0x7f000001`), not under `.local` or `.internal`, not a cloud metadata name — and only
/// ASCII hostname characters (international names must be in punycode). A host whose last
/// label is numeric must be a plain dotted-quad IPv4 address (no `127.1`, `0x7f.1`,
/// `0177.0.0.1`). Whether `http://` is allowed at all is the caller's decision.
pub(crate) fn is_allowed_media_url(url: &str) -> bool {
    let scheme_len = if has_prefix_ignore_case(url, "https://") {
        "https://".len()
    } else if has_prefix_ignore_case(url, "http://") {
        "http://".len()
    } else {
        return false;
    };
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return false;
    }
    let rest = &url[scheme_len..];
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

    fn open() -> MediaPolicy {
        MediaPolicy::default()
    }

    fn rooted(roots: &[&str]) -> MediaPolicy {
        MediaPolicy::with_roots(roots.iter().copied())
            .checked()
            .unwrap()
    }

    fn send(s: &str) -> Verdict<'_> {
        Verdict::Send(Cow::Borrowed(s))
    }

    #[test]
    fn urls() {
        for bad in [
            "https://localhost/a.png",
            "https://LOCALHOST/a.png",
            "https://LocalHost./a.png",
            "https://foo.localhost/a.png",
            "https://localhost../a.png",
            "https://127.0.0.1/a.png",
            "https://127.0.0.1./a.png",
            "https://127.0.0.1../a.png",
            "https://10.1.2.3/a.png",
            "https://172.16.0.1/a.png",
            "https://192.168.1.1/a.png",
            "https://169.254.169.254/latest/meta-data",
            "https://100.100.100.200/x",
            "https://0.0.0.0/x",
            "https://127.1/x",
            "https://0x7f.0.0.1/x",
            "https://0x7f000001/x",
            "https://2130706433/x",
            "http://2130706433/",
            "https://017700000001/x",
            "https://0177.0.0.1/x",
            "https://127.000.000.001/x",
            "https://2130706433.0/x",
            "https://[::1]/x",
            "https://[::]/x",
            "https://[fe80::1]/x",
            "https://[fe80::1%25eth0]/x",
            "https://[fd00::1]/a.png",
            "https://[fd00:ec2::254]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://[::ffff:7f00:1]/x",
            "https://[::ffff:10.0.0.1]/x",
            "https://[::127.0.0.1]/x",
            "https://[64:ff9b::169.254.169.254]/a.png",
            "https://printer.local/x",
            "https://media.local/a.png",
            "https://MEDIA.LOCAL./a.png",
            "https://db.internal/x",
            "https://metadata.google.internal/computeMetadata/v1/",
            "https://METADATA.GOOGLE.INTERNAL./x",
            "https://metadata.google.internal../a.png",
            "https://metadata.goog/x",
            "https://intranet/x",
            "https://printer/a.png",
            "https://example..com/a.png",
            "https://user:pw@example.com/x",
            "https://user@example.com/x",
            "http://user:pw@example.com/x",
            "https://example.com\\@127.0.0.1/x",
            "https://%6c%6fcalhost/x",
            "https://example.com:abc/x",
            "https://exa mple.com/x",
            "https://bücher.de/x",
            "https:///x",
            "https://",
        ] {
            assert!(!is_allowed_media_url(bad), "{bad}");
            assert_eq!(classify(bad, &open()), Verdict::Refused, "{bad}");
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
            "http://example.com/a.png",
            "HTTP://Example.COM/a.png",
        ] {
            assert!(is_allowed_media_url(good), "{good}");
            assert_eq!(classify(good, &open()), send(good), "{good}");
        }
    }

    #[test]
    fn http_can_be_refused() {
        let no_http = MediaPolicy {
            allow_http: false,
            ..open()
        };
        for url in ["http://example.com/a.png", "HTTP://example.com/a.png"] {
            assert_eq!(classify(url, &no_http), Verdict::Refused, "{url}");
        }
        let url = "https://example.com/a.png";
        assert_eq!(classify(url, &no_http), send(url));
        for other in ["ftp://example.com/a.png", "data://x", "s3://bucket/key.png"] {
            assert_eq!(classify(other, &open()), Verdict::Refused, "{other}");
        }
    }

    #[test]
    fn without_roots_no_local_path_is_media() {
        for path in [
            "/tmp/a.png",
            "/etc/shadow",
            "./out/2.png",
            "~/.ssh/id_rsa",
            "~root/.ssh/id_rsa",
            "~",
            "C:\\Users\\me\\a.png",
            "\\\\server\\share\\a.png",
            "../../.env",
            "..\\secret.png",
            "file:///tmp/a.png",
            "FILE:///etc/passwd",
        ] {
            assert_eq!(classify(path, &open()), Verdict::Drop, "{path}");
        }
        for text in [
            "image.png",
            "media/a.png",
            "screenshot",
            "",
            "C:x",
            "nice chart",
        ] {
            assert_eq!(classify(text, &open()), Verdict::Keep, "{text}");
        }
    }

    #[test]
    fn paths_inside_roots() {
        let p = rooted(&["/srv/media", "/Users/pete/My Files/", "C:\\Media"]);
        for (item, sent) in [
            ("/srv/media/a.png", "/srv/media/a.png"),
            ("/srv/media/sub/./a.png", "/srv/media/sub/a.png"),
            ("/srv/media/sub/../a.png", "/srv/media/a.png"),
            ("//srv//media/a.png", "/srv/media/a.png"),
            (
                "/Users/pete/My Files/Project Assets/render final.png",
                "/Users/pete/My Files/Project Assets/render final.png",
            ),
            ("file:///srv/media/a.png", "/srv/media/a.png"),
            ("file://localhost/srv/media/a%20b.png", "/srv/media/a b.png"),
            ("C:\\Media\\a.png", "C:\\Media\\a.png"),
            ("c:/Media/sub/a.png", "C:\\Media\\sub\\a.png"),
            ("file:///C:/Media/a.png", "C:\\Media\\a.png"),
        ] {
            assert_eq!(classify(item, &p), send(sent), "{item}");
        }
        for item in [
            "/srv/media",
            "/srv/media/",
            "/srv/media/../../etc/passwd",
            "/srv/media/../media2/x.png",
            "/srv/media2/x.png",
            "/srv/Media/a.png",
            "/srv/media/a\\..\\..\\x.png",
            "/srv/media/a\u{7}.png",
            "/srv/../etc/shadow",
            "/etc/shadow",
            "~/.ssh/id_rsa",
            "./srv/media/a.png",
            "file:///etc/passwd",
            "file:///srv/media/%2e%2e/%2e%2e/etc/passwd",
            "file:///srv/media/a%00.png",
            "file://evil.example/srv/media/a.png",
            "C:\\Media\\..\\secret.png",
            "C:\\Media\\.. \\secret.png",
            "C:\\media\\a.png",
            "D:\\Media\\a.png",
            "\\\\server\\Media\\a.png",
        ] {
            assert_eq!(classify(item, &p), Verdict::Drop, "{item}");
        }
    }

    #[test]
    fn refused_verdicts_are_counted_kept_text_is_not() {
        assert!(Verdict::Drop.is_refused());
        assert!(Verdict::Refused.is_refused());
        assert!(!Verdict::Keep.is_refused());
        assert!(!send("x").is_refused());
    }
}
