//! Local paths read lexically (SPEC §17): what an absolute path names once `.`, `..` and
//! repeated separators are resolved on paper, and whether it lies under a media root.
//!
//! The core does no I/O, so it cannot follow symbolic links: a root must be canonical (the
//! host resolves it when it configures it), and a link inside a root that points outside it
//! is the host's to catch when it opens the file. What this module guarantees is that the
//! path it hands out, read as written, stays inside the root.
//!
//! Two kinds of absolute path are read:
//! - **POSIX**: `/` then components separated by `/`. A backslash anywhere refuses the path
//!   (a Windows host would read it as a separator, a POSIX one as part of a name: the two
//!   readings must not differ).
//! - **Windows drive paths**: a letter, `:`, then `\` or `/`, with either separator between
//!   components. A component that Windows would rewrite or read specially (one ending in a
//!   dot or a space, or holding `:`, `*`, `?`, `"`, `<`, `>` or `|`) refuses the path.
//!
//! Anything else (`~`, `./`, `../`, a UNC path, a bare name) is not absolute.

use std::borrow::Cow;

/// Which kind of absolute path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathKind {
    /// `/…`.
    Posix,
    /// `X:\…`, with the drive letter in upper case.
    Windows(u8),
}

/// Why a path is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathError {
    /// Not `/…` nor `X:\…` / `X:/…`.
    NotAbsolute,
    /// A control character.
    Control,
    /// A backslash in a POSIX path.
    Backslash,
    /// A Windows component that Windows would rewrite or read specially.
    WindowsName,
    /// A `..` that climbs above the top of the file system.
    AboveTop,
    /// A `..` component (refused where none is allowed: in a media root).
    Parent,
}

impl PathError {
    /// Why, in words, for error messages.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            PathError::NotAbsolute => "must be an absolute path (`/…`, or `C:\\…` on Windows)",
            PathError::Control => "must not hold a control character",
            PathError::Backslash => "must not hold a backslash (a POSIX path is `/`-separated)",
            PathError::WindowsName => {
                "must not hold a component ending in `.` or a space, or holding one of :*?\"<>|"
            }
            PathError::AboveTop | PathError::Parent => "must not hold a `..` component",
        }
    }
}

/// An absolute path with `.`, `..` and empty components resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LexicalPath<'a> {
    pub(crate) kind: PathKind,
    pub(crate) components: Vec<&'a str>,
}

/// Whether `s` starts with a drive: a letter, `:`, then `\` or `/`.
pub(crate) fn starts_with_drive(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/')
}

/// Reads `s` as an absolute path and resolves it lexically. With `allow_parent` false, any
/// `..` component is refused (roots); otherwise a `..` removes the component before it.
pub(crate) fn parse_absolute(s: &str, allow_parent: bool) -> Result<LexicalPath<'_>, PathError> {
    if s.chars().any(char::is_control) {
        return Err(PathError::Control);
    }
    let (kind, body, separators): (PathKind, &str, &[char]) =
        if let Some(body) = s.strip_prefix('/') {
            if s.contains('\\') {
                return Err(PathError::Backslash);
            }
            (PathKind::Posix, body, &['/'])
        } else if starts_with_drive(s) {
            let drive = s.as_bytes()[0].to_ascii_uppercase();
            (PathKind::Windows(drive), &s[3..], &['/', '\\'])
        } else {
            return Err(PathError::NotAbsolute);
        };
    let mut components = Vec::new();
    for part in body.split(separators) {
        match part {
            "" | "." => {}
            ".." if !allow_parent => return Err(PathError::Parent),
            ".." => {
                if components.pop().is_none() {
                    return Err(PathError::AboveTop);
                }
            }
            _ => {
                if matches!(kind, PathKind::Windows(_)) && !is_plain_windows_name(part) {
                    return Err(PathError::WindowsName);
                }
                components.push(part);
            }
        }
    }
    Ok(LexicalPath { kind, components })
}

/// A Windows component read as written: no trailing dot or space (Windows drops them, so
/// `.. ` would mean `..`), no stream or wildcard characters.
fn is_plain_windows_name(part: &str) -> bool {
    !part.ends_with(['.', ' ']) && !part.contains([':', '*', '?', '"', '<', '>', '|'])
}

impl LexicalPath<'_> {
    /// Whether `self` names something strictly inside `root` (the root itself is a
    /// directory, not a file to send). Components compare exactly; only the drive letter
    /// ignores case.
    pub(crate) fn is_inside(&self, root: &LexicalPath<'_>) -> bool {
        self.kind == root.kind
            && self.components.len() > root.components.len()
            && self.components.starts_with(&root.components)
    }

    /// The path written out: `/a/b` for POSIX, `C:\a\b` for Windows.
    pub(crate) fn render(&self) -> String {
        match self.kind {
            PathKind::Posix => {
                let mut out = String::new();
                for c in &self.components {
                    out.push('/');
                    out.push_str(c);
                }
                if out.is_empty() {
                    out.push('/');
                }
                out
            }
            PathKind::Windows(drive) => {
                let mut out = String::from(drive as char);
                out.push_str(":\\");
                out.push_str(&self.components.join("\\"));
                out
            }
        }
    }
}

/// The path of a `file:` URL (`file:///p`, `file://localhost/p`, `file:///C:/p`), with
/// percent escapes decoded. `None` when it is not written `file://…` (the one-slash form
/// `file:/p` is not read), names another host, holds a query or a fragment, an invalid
/// escape, or decodes to something that is not UTF-8.
pub(crate) fn file_url_path(url: &str) -> Option<Cow<'_, str>> {
    let scheme = url.get(.."file://".len())?;
    if !scheme.eq_ignore_ascii_case("file://") {
        return None;
    }
    let rest = &url["file://".len()..];
    let slash = rest.find('/')?;
    let host = &rest[..slash];
    if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
        return None;
    }
    let mut path = &rest[slash..];
    if path.contains(['?', '#']) {
        return None;
    }
    // `file:///C:/x` names the Windows path `C:/x`.
    if starts_with_drive(&path[1..]) {
        path = &path[1..];
    }
    percent_decode(path)
}

/// Decodes `%XX` escapes; `None` for an invalid escape or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<Cow<'_, str>> {
    if !s.contains('%') {
        return Some(Cow::Borrowed(s));
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> Result<String, PathError> {
        parse_absolute(s, true).map(|p| p.render())
    }

    #[test]
    fn lexical_resolution() {
        assert_eq!(
            norm("/srv//media/./a/../b.png"),
            Ok("/srv/media/b.png".into())
        );
        assert_eq!(norm("/srv/media/"), Ok("/srv/media".into()));
        assert_eq!(norm("/"), Ok("/".into()));
        assert_eq!(norm("/.."), Err(PathError::AboveTop));
        assert_eq!(norm("/a/../../b"), Err(PathError::AboveTop));
        assert_eq!(norm("/a\\..\\b"), Err(PathError::Backslash));
        assert_eq!(norm("/a/\u{0}b"), Err(PathError::Control));
        assert_eq!(norm("c:/Media\\x/../y.png"), Ok("C:\\Media\\y.png".into()));
        assert_eq!(norm("C:\\m\\.. \\x"), Err(PathError::WindowsName));
        assert_eq!(norm("C:\\m\\x.png:secret"), Err(PathError::WindowsName));
        for relative in [
            "./a",
            "../a",
            "~/a",
            "a/b",
            "\\\\server\\share\\a",
            "C:a",
            "",
        ] {
            assert_eq!(norm(relative), Err(PathError::NotAbsolute), "{relative}");
        }
        assert_eq!(parse_absolute("/a/../b", false), Err(PathError::Parent));
    }

    #[test]
    fn inside_a_root() {
        let root = parse_absolute("/srv/media", false).unwrap();
        let inside = |p: &str| parse_absolute(p, true).unwrap().is_inside(&root);
        assert!(inside("/srv/media/a.png"));
        assert!(inside("/srv/media/sub/a.png"));
        assert!(!inside("/srv/media"));
        assert!(!inside("/srv/media2/a.png"));
        assert!(!inside("/srv/media/../media2/a.png"));
        assert!(!inside("/srv/Media/a.png"));
        let win = parse_absolute("C:\\Media", false).unwrap();
        let inside = |p: &str| parse_absolute(p, true).unwrap().is_inside(&win);
        assert!(inside("c:/Media/a.png"));
        assert!(!inside("C:\\media\\a.png"));
        assert!(!inside("D:\\Media\\a.png"));
        assert!(
            !parse_absolute("/Media/a.png", true)
                .unwrap()
                .is_inside(&win)
        );
    }

    #[test]
    fn file_urls() {
        assert_eq!(
            file_url_path("file:///srv/a%20b.png").as_deref(),
            Some("/srv/a b.png")
        );
        assert_eq!(
            file_url_path("file://localhost/srv/a.png").as_deref(),
            Some("/srv/a.png")
        );
        assert_eq!(
            file_url_path("file:///C:/m/a.png").as_deref(),
            Some("C:/m/a.png")
        );
        assert_eq!(
            file_url_path("file:///srv/%2e%2e/x").as_deref(),
            Some("/srv/../x")
        );
        for bad in [
            "file://evil.example/srv/a.png",
            "file:///srv/a.png?x",
            "file:///srv/a.png#x",
            "file:///srv/%zz",
            "file:///srv/%ff",
            "file:///srv/%2",
            "file://",
            "file:/srv/a.png",
            "file:srv/a.png",
            "file:",
        ] {
            assert_eq!(file_url_path(bad), None, "{bad}");
        }
    }
}
