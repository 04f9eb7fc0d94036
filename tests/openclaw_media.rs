//! OpenClaw's `mediaLocalRoots` (feature `openclaw`): the directories a channel or account
//! allows outbound local media from become the media roots, and then decide which paths
//! the model writes are media.

use replystream::openclaw::{OpenClawConfig, Selection, WarningKind};
use replystream::sim::Sim;
use replystream::{ConfigOverrides, Engine, Input};

fn read(text: &str, selection: &Selection) -> replystream::openclaw::OpenClawSettings {
    OpenClawConfig::parse(text)
        .and_then(|c| c.settings(selection))
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

const FILE: &str = r#"{
  channels: {
    telegram: {
      mediaLocalRoots: ["/srv/bot/media", "~/Pictures", "relative/dir"],
      accounts: {
        main: {},
        alerts: { mediaLocalRoots: ["/srv/alerts/charts/"] },
      },
      defaultAccount: "main",
    },
  },
}"#;

/// The media sent for `reply` under the settings `selection` reads from [`FILE`].
fn media_for(selection: &Selection, reply: &str) -> Vec<String> {
    let settings = read(FILE, selection);
    let resolved = settings.resolve(&ConfigOverrides::default()).unwrap();
    let mut sim = Sim::new(Engine::new(resolved.config().clone(), 1).unwrap());
    sim.push(Input::TextDelta(reply))
        .push(Input::Finish)
        .run_until_idle();
    sim.sends()
        .into_iter()
        .flat_map(|(_, s)| s.payload.media)
        .collect()
}

#[test]
fn channel_roots_apply_and_an_account_list_replaces_them() {
    let reply = "MEDIA: /srv/bot/media/a.png /srv/alerts/charts/b.png ~/Pictures/c.png\n";
    // The default account has no list: the channel's absolute roots apply.
    let channel = Selection::channel("telegram");
    let s = read(FILE, &channel);
    assert_eq!(
        s.config().media.roots,
        ["/srv/bot/media"],
        "absolute entries only"
    );
    let warned: Vec<(&str, WarningKind)> = s
        .warnings
        .iter()
        .map(|w| (w.path.as_str(), w.kind))
        .collect();
    assert_eq!(
        warned,
        [
            ("channels.telegram.mediaLocalRoots[1]", WarningKind::Ignored),
            ("channels.telegram.mediaLocalRoots[2]", WarningKind::Ignored),
        ]
    );
    assert!(
        s.warnings[0].message.contains("\"~/Pictures\""),
        "{}",
        s.warnings[0]
    );
    assert_eq!(media_for(&channel, reply), ["/srv/bot/media/a.png"]);
    // The alerts account's list replaces the channel's.
    let alerts = Selection::channel("telegram").account("alerts");
    let resolved = read(FILE, &alerts)
        .resolve(&ConfigOverrides::default())
        .unwrap();
    assert_eq!(resolved.config().media.roots, ["/srv/alerts/charts"]);
    assert_eq!(media_for(&alerts, reply), ["/srv/alerts/charts/b.png"]);
    // No key: no roots, no local media.
    let none = read("{ channels: { telegram: {} } }", &channel);
    assert!(none.config().media.roots.is_empty());
}

#[test]
fn unusable_roots_are_refused_with_their_path() {
    for (text, message) in [
        (
            "{ channels: { telegram: { mediaLocalRoots: '/srv/media' } } }",
            "channels.telegram.mediaLocalRoots: expected an array of directories, got \"/srv/media\"",
        ),
        (
            "{ channels: { telegram: { mediaLocalRoots: [3] } } }",
            "channels.telegram.mediaLocalRoots[0]: expected a string, got 3",
        ),
        (
            "{ channels: { telegram: { mediaLocalRoots: ['/srv/../etc'] } } }",
            "channels.telegram.mediaLocalRoots[0]: must not hold a `..` component (got \"/srv/../etc\")",
        ),
        (
            "{ channels: { telegram: { mediaLocalRoots: ['/'] } } }",
            "channels.telegram.mediaLocalRoots[0]: must not be the top of the file system",
        ),
    ] {
        let err = OpenClawConfig::parse(text)
            .and_then(|c| c.settings(&Selection::channel("telegram")))
            .expect_err(text)
            .to_string();
        assert!(err.contains(message), "{text}: {err}");
    }
}
