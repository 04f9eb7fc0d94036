//! Media written by the model (SPEC §17): which references become media items, what text
//! remains in the message, and how refusals are counted. Expected values are written out
//! here; nothing is judged with the library's own reading.

mod common;

use common::*;
use replystream::{Config, Engine, Error, Input, MediaPolicy, SendRequest};

/// What a reply became: the sends in order, and the count of refused references.
struct Outcome {
    sends: Vec<SendRequest>,
    refused: u64,
}

impl Outcome {
    fn media(&self) -> Vec<&str> {
        self.sends
            .iter()
            .flat_map(|s| s.payload.media.iter().map(String::as_str))
            .collect()
    }

    fn texts(&self) -> Vec<&str> {
        self.sends
            .iter()
            .map(|s| s.payload.text.as_str())
            .filter(|t| !t.is_empty())
            .collect()
    }
}

/// `text` streamed in `size`-char deltas through an engine with `media`.
fn run(text: &str, size: usize, media: &MediaPolicy) -> Outcome {
    let config = Config {
        media: media.clone(),
        ..config("generic")
    };
    let mut sim = Sim::new(engine(config));
    sim.stream(text, size, 0)
        .push(Input::Finish)
        .run_until_idle();
    Outcome {
        sends: sim.sends().into_iter().map(|(_, s)| s).collect(),
        refused: sim.engine.stats().media_refused,
    }
}

/// Checks `text` at several delta sizes: the media sent, the message texts, the count.
fn check(text: &str, media: &MediaPolicy, want_media: &[&str], want_texts: &[&str], refused: u64) {
    for size in [1, 2, 3, 7, 1000] {
        let out = run(text, size, media);
        assert_eq!(
            out.media(),
            want_media,
            "media of {text:?} in {size}-char deltas"
        );
        assert_eq!(
            out.texts(),
            want_texts,
            "texts of {text:?} in {size}-char deltas"
        );
        assert_eq!(
            out.refused, refused,
            "refusals in {text:?}, {size}-char deltas"
        );
    }
}

/// Checks `Look:\nMEDIA: <payload>\nEnd.` for each (payload, media sent): a payload that
/// sends nothing is one refusal.
fn check_payloads(media: &MediaPolicy, cases: &[(&str, &[&str])]) {
    for (payload, sent) in cases {
        let text = format!("Look:\nMEDIA: {payload}\nEnd.");
        let refused = u64::from(sent.is_empty());
        check(&text, media, sent, texts_around(sent), refused);
    }
}

/// The texts of `Look:\nMEDIA: …\nEnd.`: the text before a media item goes out with it,
/// the rest after it; with nothing sent, the line is gone and the text is one message.
fn texts_around(media: &[&str]) -> &'static [&'static str] {
    if media.is_empty() {
        &["Look:\nEnd."]
    } else {
        &["Look:", "End."]
    }
}

fn rooted(roots: &[&str]) -> MediaPolicy {
    MediaPolicy::with_roots(roots.iter().copied())
}

#[test]
fn the_issues_two_paths_are_not_media_and_not_shown() {
    for path in ["~/.ssh/id_rsa", "/etc/shadow"] {
        let text = format!("Here is the file:\nMEDIA: {path}\nDone.");
        check(
            &text,
            &MediaPolicy::default(),
            &[],
            &["Here is the file:\nDone."],
            1,
        );
        // A root elsewhere does not change that.
        check(
            &text,
            &rooted(&["/srv/media"]),
            &[],
            &["Here is the file:\nDone."],
            1,
        );
        let bracket = format!("Here it is [[media:{path}]] now.");
        check(
            &bracket,
            &MediaPolicy::default(),
            &[],
            &["Here it is now."],
            1,
        );
    }
}

#[test]
fn adversarial_local_references_under_a_root() {
    let root = rooted(&["/srv/media"]);
    // (the MEDIA: payload, the media sent)
    let cases: &[(&str, &[&str])] = &[
        ("/srv/media/a.png", &["/srv/media/a.png"]),
        ("/srv/media/sub/../b.png", &["/srv/media/b.png"]),
        ("/srv/media/../../etc/passwd", &[]),
        ("/srv/media/../media2/x.png", &[]),
        ("/srv/media2/x.png", &[]),
        ("/srv/media", &[]),
        ("/srv/media/", &[]),
        ("/srv/Media/a.png", &[]),
        ("file:///srv/media/a.png", &["/srv/media/a.png"]),
        (
            "file://localhost/srv/media/my%20chart.png",
            &["/srv/media/my chart.png"],
        ),
        ("file:///etc/passwd", &[]),
        ("file:///srv/media/%2e%2e/%2e%2e/etc/passwd", &[]),
        ("file://attacker.example/srv/media/a.png", &[]),
        ("~/x.png", &[]),
        ("~root/.ssh/id_rsa", &[]),
        ("./x.png", &[]),
        ("../srv/media/x.png", &[]),
        ("\"/srv/media/my chart.png\"", &["/srv/media/my chart.png"]),
        ("'/srv/media/../../etc/my passwd'", &[]),
        (
            "/srv/media/My Files/render final.png",
            &["/srv/media/My Files/render final.png"],
        ),
        ("/srv/media/a\\..\\..\\..\\etc\\passwd", &[]),
        ("C:\\srv\\media\\a.png", &[]),
        ("\\\\server\\share\\a.png", &[]),
    ];
    check_payloads(&root, cases);
    // A name without a leading `/`, `./` or `~` is no reference: the line is prose.
    for prose in [
        "Look:\nMEDIA: srv/media/x.png\nEnd.",
        "Look:\nMEDIA: chart.png\nEnd.",
    ] {
        check(prose, &root, &[], &[prose], 0);
    }
    // Several on one line: the good ones are sent, in order; the others vanish.
    check(
        "MEDIA: /srv/media/a.png ~/.ssh/key.pem /srv/media/b.png /etc/shadow\nok",
        &root,
        &["/srv/media/a.png", "/srv/media/b.png"],
        &["ok"],
        2,
    );
    // A path without an extension takes the words after it (it may hold spaces): the
    // whole run is one refused item, never a shorter path that happens to be allowed.
    check(
        "MEDIA: /srv/media/a.png ~/.ssh/id_rsa /srv/media/b.png\nok",
        &root,
        &["/srv/media/a.png"],
        &["ok"],
        1,
    );
}

#[test]
fn windows_roots_hold_windows_paths_only() {
    let root = rooted(&["C:\\Media"]);
    let cases: &[(&str, &[&str])] = &[
        ("C:\\Media\\a.png", &["C:\\Media\\a.png"]),
        ("c:/Media/sub/a.png", &["C:\\Media\\sub\\a.png"]),
        ("file:///C:/Media/a.png", &["C:\\Media\\a.png"]),
        ("C:\\Media\\..\\Windows\\win.ini", &[]),
        ("C:\\Media\\.. \\secret.png", &[]),
        ("C:\\Media\\a.png:hidden", &[]),
        ("C:\\media\\a.png", &[]),
        ("D:\\Media\\a.png", &[]),
        ("/Media/a.png", &[]),
    ];
    check_payloads(&root, cases);
}

#[test]
fn refused_urls_stay_as_text() {
    for url in [
        "http://2130706433/a.png",
        "https://0x7f000001/a.png",
        "https://0177.0.0.1/a.png",
        "https://127.1/a.png",
        "https://127.0.0.1./a.png",
        "https://LOCALHOST/a.png",
        "https://[::1]/a.png",
        "https://[::ffff:127.0.0.1]/a.png",
        "https://[fd00:ec2::254]/latest",
        "https://[fe80::1]/a.png",
        "https://169.254.169.254/latest/meta-data",
        "https://METADATA.GOOGLE.INTERNAL./computeMetadata/v1/",
        "https://printer.local/a.png",
        "https://db.internal/a.png",
        "https://intranet/a.png",
        "https://user:secret@example.com/a.png",
        "ftp://example.com/a.png",
    ] {
        // Alone on its line, the line is prose and reads as written.
        let text = format!("Look:\nMEDIA: {url}\nEnd.");
        check(&text, &MediaPolicy::default(), &[], &[text.as_str()], 1);
        // Beside a good item, the marker goes and the refused URL stays.
        let text = format!("MEDIA: https://example.com/ok.png {url}\nEnd.");
        let rest = format!("{url}\nEnd.");
        check(
            &text,
            &MediaPolicy::default(),
            &["https://example.com/ok.png"],
            &[rest.as_str()],
            1,
        );
    }
    // Public hosts, any case, a trailing dot: sent as written.
    for url in [
        "https://EXAMPLE.com./a.png",
        "http://example.com/a.png",
        "https://[2606:4700::1111]/a.png",
    ] {
        check(
            &format!("MEDIA: {url}\n"),
            &MediaPolicy::default(),
            &[url],
            &[],
            0,
        );
    }
}

#[test]
fn http_can_be_refused() {
    let text = "See:\nMEDIA: http://example.com/a.png\nok";
    check(
        text,
        &MediaPolicy::default(),
        &["http://example.com/a.png"],
        &["See:", "ok"],
        0,
    );
    let https_only = MediaPolicy {
        allow_http: false,
        ..MediaPolicy::default()
    };
    check(text, &https_only, &[], &[text], 1);
    check(
        "MEDIA: https://example.com/a.png\n",
        &https_only,
        &["https://example.com/a.png"],
        &[],
        0,
    );
}

#[test]
fn bad_roots_are_refused_at_construction() {
    for (root, why) in [
        ("", "must not be empty"),
        ("media", "must be an absolute path"),
        ("~/media", "must be an absolute path"),
        ("/srv/../etc", "must not hold a `..` component"),
        ("/", "must not be the top of the file system"),
    ] {
        let config = Config {
            media: rooted(&["/srv/ok", root]),
            ..Config::default()
        };
        let err = Engine::new(config, 1).unwrap_err();
        let Error::InvalidConfig(message) = &err else {
            panic!("{err:?}");
        };
        assert!(
            message.starts_with(&format!("media.roots[1] {why}")),
            "{root:?}: {message}"
        );
    }
}
