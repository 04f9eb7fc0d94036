//! The format and table mode in the configuration (SPEC §16): a per-channel default in the
//! profiles, overridable per account and explicitly, refused where the channel cannot show
//! it, and read from an OpenClaw file (`channels.<ch>.markdown.tables`, accounts too).

use replystream::{ChannelProfile, Config, ConfigOverrides, Format, TableMode};

#[test]
fn each_profile_has_its_format() {
    let want = [
        ("telegram", Format::TelegramHtml),
        ("discord", Format::Discord),
        ("slack", Format::SlackMrkdwn),
        ("whatsapp", Format::Whatsapp),
        ("signal", Format::Plain),
        ("imessage", Format::Plain),
        ("googlechat", Format::Markdown),
        ("generic", Format::Markdown),
    ];
    for (name, format) in want {
        let profile = ChannelProfile::by_name(name).unwrap();
        assert_eq!(profile.format, format, "{name}");
        assert_eq!(Config::for_channel(&profile).format, format, "{name}");
        assert_eq!(Format::for_channel(name), format, "{name}");
        let resolved = Config::resolve(&profile, &[]).unwrap();
        assert_eq!(
            resolved.render_options().table_mode_for(format),
            format.default_table_mode()
        );
    }
}

#[test]
fn account_then_explicit_overrides_win() {
    let account = ConfigOverrides {
        format: Some(Format::TelegramEntities),
        table_mode: Some(Some(TableMode::Bullets)),
        ..ConfigOverrides::default()
    };
    let explicit = ConfigOverrides {
        table_mode: Some(Some(TableMode::Off)),
        ..ConfigOverrides::default()
    };
    let r = Config::resolve(&ChannelProfile::TELEGRAM, &[&account, &explicit]).unwrap();
    assert_eq!(r.config().format, Format::TelegramEntities);
    assert_eq!(r.render_options().table_mode, Some(TableMode::Off));
    let r = Config::resolve(&ChannelProfile::TELEGRAM, &[&account]).unwrap();
    assert_eq!(r.render_options().table_mode, Some(TableMode::Bullets));
}

#[test]
fn a_format_the_channel_cannot_show_is_refused() {
    let slack_on_telegram = ConfigOverrides {
        format: Some(Format::SlackMrkdwn),
        ..ConfigOverrides::default()
    };
    let err = Config::resolve(&ChannelProfile::TELEGRAM, &[&slack_on_telegram]).unwrap_err();
    assert!(
        err.to_string()
            .contains("format slack-mrkdwn cannot be shown on channel telegram"),
        "{err}"
    );
    // Plain text and Markdown go anywhere; the generic channel takes any format.
    for f in [Format::Plain, Format::Markdown] {
        let o = ConfigOverrides {
            format: Some(f),
            ..ConfigOverrides::default()
        };
        assert!(Config::resolve(&ChannelProfile::DISCORD, &[&o]).is_ok());
    }
    assert!(Config::resolve(&ChannelProfile::GENERIC, &[&slack_on_telegram]).is_ok());
    // Native tables only where the format shows tables.
    let native = ConfigOverrides {
        table_mode: Some(Some(TableMode::Native)),
        ..ConfigOverrides::default()
    };
    let err = Config::resolve(&ChannelProfile::DISCORD, &[&native]).unwrap_err();
    assert!(err.to_string().contains("table_mode native"), "{err}");
    assert!(Config::resolve(&ChannelProfile::GENERIC, &[&native]).is_ok());
}

#[cfg(feature = "openclaw")]
#[test]
fn openclaw_markdown_tables_per_channel_and_account() {
    use replystream::openclaw::{OpenClawConfig, Selection};
    let text = r#"{
      channels: {
        telegram: {
          markdown: { tables: "bullets" },
          accounts: { ops: { markdown: { tables: "block" } }, quiet: {} },
        },
        discord: { markdown: { tables: "off" } },
        slack: { markdown: { tables: "grid" } },
      },
    }"#;
    let file = OpenClawConfig::parse(text).unwrap();
    let mode = |sel: Selection| file.settings(&sel).unwrap().overrides.table_mode;
    assert_eq!(
        mode(Selection::channel("telegram").account("quiet")),
        Some(Some(TableMode::Bullets))
    );
    assert_eq!(
        mode(Selection::channel("telegram").account("ops")),
        Some(Some(TableMode::Code))
    );
    assert_eq!(
        mode(Selection::channel("discord")),
        Some(Some(TableMode::Off))
    );
    let err = file
        .settings(&Selection::channel("slack"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("channels.slack.markdown.tables") && err.contains("\"bullets\""),
        "{err}"
    );
}
