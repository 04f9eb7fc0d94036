//! OpenClaw configuration files (feature `openclaw`): realistic files written from
//! OpenClaw's documented keys, read for a channel and account, layered as SPEC §9 says, with
//! unknown and ignored keys reported and invalid values refused.

use replystream::openclaw::{OpenClawConfig, OpenClawSettings, Selection, WarningKind};
use replystream::sim::Sim;
use replystream::{
    BreakMode, BreakPreference, ChannelProfile, ChunkMode, ConfigOverrides, Engine, HumanDelay,
    Input, LengthMetric, PreviewMode, ReasoningMode,
};

fn file(name: &str) -> OpenClawConfig {
    let path = format!("{}/tests/data/openclaw/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    OpenClawConfig::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn settings(name: &str, selection: Selection) -> OpenClawSettings {
    file(name)
        .settings(&selection)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Each warning as (path, kind), in the order reported.
fn warnings(s: &OpenClawSettings) -> Vec<(String, WarningKind)> {
    s.warnings
        .iter()
        .map(|w| (w.path.clone(), w.kind))
        .collect()
}

fn w(path: &str, kind: WarningKind) -> (String, WarningKind) {
    (path.to_owned(), kind)
}

#[test]
fn telegram_default_account_layers_defaults_agent_channel_and_messages() {
    let s = settings("gateway.json5", Selection::channel("telegram"));
    assert_eq!(s.profile, ChannelProfile::TELEGRAM);
    assert_eq!(warnings(&s), [], "{:#?}", s.warnings);
    let resolved = s.resolve(&ConfigOverrides::default()).unwrap();
    let c = resolved.config();
    // Channel level (the `default` account sets nothing of ours).
    assert_eq!((c.text_limit, c.metric), (3500, LengthMetric::Utf16));
    assert_eq!(c.preview, PreviewMode::Block);
    assert_eq!((c.preview_block_min, c.preview_block_max), (150, 600));
    // agents.defaults.
    assert_eq!((c.chunk_min, c.chunk_max), (400, 1000));
    assert_eq!(c.break_preference, BreakPreference::Paragraph);
    assert_eq!(c.break_mode, BreakMode::TextEnd);
    assert!(c.block_streaming);
    assert_eq!(c.coalesce_idle_ms, 700);
    assert_eq!(c.human_delay, HumanDelay::Natural);
    // The only agent, `main`.
    assert_eq!(c.reasoning, ReasoningMode::On);
    assert_eq!(c.prefix_context.identity_name.as_deref(), Some("Samantha"));
    // messages.responsePrefix, with the model from agents.defaults.model.primary.
    assert_eq!(
        c.prefix_context.model.as_deref(),
        Some("anthropic/claude-opus-4-6")
    );
    assert_eq!(c.prefix_context.thinking_level.as_deref(), Some("high"));
    assert_eq!(resolved.response_prefix(), Some("[claude-opus-4-6]"));
    // Naming the default account gives the same.
    let named = settings(
        "gateway.json5",
        Selection::channel("telegram").account("default"),
    );
    assert_eq!(named.overrides, s.overrides);
}

#[test]
fn an_account_overrides_its_channel_and_an_empty_prefix_stops_the_cascade() {
    let s = settings(
        "gateway.json5",
        Selection::channel("telegram").account("alerts"),
    );
    assert_eq!(warnings(&s), []);
    let resolved = s.resolve(&ConfigOverrides::default()).unwrap();
    let c = resolved.config();
    assert_eq!(c.text_limit, 1000);
    assert_eq!(c.preview, PreviewMode::Off);
    assert_eq!(c.chunk_mode, ChunkMode::Newline);
    // Still from the channel and the defaults.
    assert_eq!((c.preview_block_min, c.preview_block_max), (150, 600));
    assert_eq!((c.chunk_min, c.chunk_max), (400, 1000));
    assert_eq!(resolved.response_prefix(), None);

    // Streamed through the engine: the account's limit holds, each paragraph (above the
    // chunk minimum, 400) is its own message (newline chunk mode), nothing is prefixed, and
    // every paragraph arrives in order.
    let paragraphs: Vec<String> = (0..6)
        .map(|i| {
            format!(
                "Paragraph {i}: {}",
                "alert text ".repeat(38 + 5 * i).trim_end()
            )
        })
        .collect();
    let reply = paragraphs.join("\n\n");
    let config = s.config();
    let mut sim = Sim::with_latency(Engine::new(config, 1).unwrap(), 20);
    sim.stream(&reply, 7, 5)
        .push(Input::Finish)
        .run_until_idle();
    let sent = sim.delivered_texts();
    assert_eq!(sent, paragraphs);
    for text in &sent {
        assert!(LengthMetric::Utf16.len(text) <= 1000, "{text}");
    }
}

#[test]
fn discord_account_and_channel_and_defaults_each_set_part_of_the_coalescer() {
    let s = settings(
        "gateway.json5",
        Selection::channel("discord").account("ops"),
    );
    assert_eq!(warnings(&s), []);
    let resolved = s.resolve(&ConfigOverrides::default()).unwrap();
    let c = resolved.config();
    assert_eq!(s.profile, ChannelProfile::DISCORD);
    assert_eq!((c.text_limit, c.max_lines), (1800, Some(40)));
    // min and idle from the channel, max from the account; the default idle (700) is
    // overridden by the channel's 1500.
    assert_eq!((c.coalesce_min, c.coalesce_max), (Some(900), Some(1200)));
    assert_eq!(c.coalesce_idle_ms, 1500);
    assert!(c.block_streaming);
    assert_eq!(c.preview, PreviewMode::Off);
    // "auto" is [{identity.name}].
    assert_eq!(resolved.response_prefix(), Some("[Samantha]"));
    // The only account is the one used when none is named.
    let implicit = settings("gateway.json5", Selection::channel("discord"));
    assert_eq!(implicit.overrides, s.overrides);
}

#[test]
fn explicit_overrides_are_the_last_layer() {
    let s = settings(
        "gateway.json5",
        Selection::channel("discord").account("ops"),
    );
    let explicit = ConfigOverrides {
        text_limit: Some(1500),
        max_lines: Some(None),
        human_delay: Some(HumanDelay::Off),
        ..ConfigOverrides::default()
    };
    let resolved = s.resolve(&explicit).unwrap();
    let c = resolved.config();
    assert_eq!((c.text_limit, c.max_lines), (1500, None));
    assert_eq!(c.human_delay, HumanDelay::Off);
    // The file's values the explicit layer does not touch stay, clamped to the new limit
    // less the prefix ("[Samantha] ").
    assert_eq!(c.coalesce_max, Some(1200));
    assert_eq!(resolved.text_budget(), 1500 - "[Samantha] ".len());
}

#[test]
fn several_accounts_without_a_default_use_the_channel_level_and_say_so() {
    let s = settings("gateway.json5", Selection::channel("slack"));
    assert_eq!(
        warnings(&s),
        [
            w(
                "channels.slack.streaming.nativeTransport",
                WarningKind::Ignored
            ),
            w("channels.slack.accounts", WarningKind::Selection),
        ]
    );
    assert_eq!(s.overrides.preview, Some(PreviewMode::Partial));
    let err = file("gateway.json5")
        .settings(&Selection::channel("slack").account("nope"))
        .unwrap_err();
    assert_eq!(err.path.as_deref(), Some("channels.slack.accounts"));
    assert!(
        err.message
            .contains("no account `nope` (configured: work, home)"),
        "{err}"
    );
    assert_eq!(file("gateway.json5").accounts("slack"), ["work", "home"]);
    assert_eq!(
        file("gateway.json5").channels(),
        ["telegram", "discord", "slack"]
    );
}

#[test]
fn a_channel_missing_from_the_file_or_without_a_profile_is_reported() {
    let s = settings("gateway.json5", Selection::channel("irc"));
    assert_eq!(
        warnings(&s),
        [
            w("channels.irc", WarningKind::Selection),
            w("channels.irc", WarningKind::Selection),
        ]
    );
    assert_eq!(s.profile, ChannelProfile::GENERIC);
    // Only agents.defaults, the agent and messages apply.
    assert_eq!(s.overrides.chunk_min, Some(400));
    assert_eq!(s.overrides.text_limit, None);
    assert_eq!(
        s.overrides.response_prefix,
        Some(Some("[{model}]".to_owned()))
    );
    let err = file("gateway.json5")
        .settings(&Selection::channel("irc").account("x"))
        .unwrap_err();
    assert!(err.message.contains("not configured"), "{err}");
}

#[test]
fn legacy_flat_keys_are_applied_with_a_warning_unless_the_nested_key_is_set() {
    let s = settings("legacy-flat.json5", Selection::channel("telegram"));
    assert_eq!(
        warnings(&s),
        [
            w("channels.telegram.streamMode", WarningKind::Legacy),
            w("channels.telegram.chunkMode", WarningKind::Legacy),
            w("channels.telegram.draftChunk", WarningKind::Legacy),
            w(
                "channels.telegram.draftChunk.breakPreference",
                WarningKind::Ignored
            ),
        ]
    );
    let c = s.config();
    assert_eq!(c.preview, PreviewMode::Block);
    assert_eq!((c.preview_block_min, c.preview_block_max), (120, 500));
    assert_eq!(c.chunk_mode, ChunkMode::Newline);
    assert!(!c.block_streaming, "blockStreamingDefault: off");
    // An unset custom bound falls back to the natural range.
    assert_eq!(
        c.human_delay,
        HumanDelay::Custom {
            min_ms: 500,
            max_ms: 2500
        }
    );
    let legacy = &s.warnings[0];
    assert_eq!(legacy.line, 13);
    assert!(
        legacy
            .to_string()
            .contains("channels.telegram.streaming.mode"),
        "{legacy}"
    );

    let s = settings("legacy-flat.json5", Selection::channel("discord"));
    assert_eq!(
        warnings(&s),
        [
            w("channels.discord.streamMode", WarningKind::Ignored),
            w("channels.discord.blockStreaming", WarningKind::Legacy),
            w(
                "channels.discord.blockStreamingCoalesce",
                WarningKind::Legacy
            ),
        ]
    );
    let c = s.config();
    assert!(
        c.block_streaming,
        "the channel's blockStreaming beats the default"
    );
    assert_eq!(
        c.preview,
        PreviewMode::Off,
        "streaming.mode wins over streamMode"
    );
    assert_eq!((c.coalesce_min, c.coalesce_max), (Some(1000), Some(1900)));
    assert_eq!(c.coalesce_idle_ms, 800);

    // Slack's legacy names, and a boolean `streaming`.
    let slack = settings("legacy-flat.json5", Selection::channel("slack"));
    assert_eq!(slack.overrides.preview, Some(PreviewMode::Block));
    assert_eq!(
        warnings(&slack),
        [w("channels.slack.streamMode", WarningKind::Legacy)]
    );
    let whatsapp = settings("legacy-flat.json5", Selection::channel("whatsapp"));
    assert_eq!(whatsapp.overrides.preview, Some(PreviewMode::Partial));
    assert_eq!(
        warnings(&whatsapp),
        [w("channels.whatsapp.streaming", WarningKind::Legacy)]
    );
}

#[test]
fn unknown_ignored_and_repeated_keys_are_reported_with_their_paths() {
    let s = settings("typos.json5", Selection::channel("discord").agent("main"));
    assert_eq!(
        warnings(&s),
        [
            w("$include", WarningKind::Ignored),
            w(
                "agents.defaults.blockStreamingChunks",
                WarningKind::UnknownKey
            ),
            w(
                "agents.defaults.blockStreamingCoalesce.idleMS",
                WarningKind::UnknownKey
            ),
            w("agents.defaults.humanDelay.minMS", WarningKind::UnknownKey),
            w("agents.list[0].humandelay", WarningKind::UnknownKey),
            w("channels.discord.textChunklimit", WarningKind::UnknownKey),
            w("channels.discord.textChunkLimit", WarningKind::Ignored),
            w("channels.discord.streaming.progress", WarningKind::Ignored),
            w("channels.discord.streaming.blok", WarningKind::UnknownKey),
            w("channels.discord.streaming.mode", WarningKind::Ignored),
            w(
                "channels.discord.streaming.preview.toolProgress",
                WarningKind::Ignored
            ),
            w(
                "channels.discord.streaming.preview.chunk.breakPreference",
                WarningKind::Ignored
            ),
        ],
        "{:#?}",
        s.warnings
    );
    let message = |path: &str| {
        s.warnings
            .iter()
            .find(|w| w.path == path)
            .map(|w| w.message.clone())
            .unwrap()
    };
    assert!(
        message("agents.defaults.blockStreamingChunks")
            .contains("did you mean `blockStreamingChunk`")
    );
    assert!(message("agents.defaults.humanDelay.minMS").contains("did you mean `minMs`"));
    assert!(message("channels.discord.textChunklimit").contains("did you mean `textChunkLimit`"));
    assert!(message("channels.discord.textChunkLimit").contains("the last value counts"));
    assert!(
        message("channels.discord.streaming.blok")
            .contains("known here: mode, chunkMode, block, preview")
    );
    assert!(message("$include").contains("not followed"));
    let c = s.config();
    assert_eq!(c.text_limit, 1700, "the last of the repeated keys");
    assert_eq!(c.preview, PreviewMode::Off, "progress reads as off");
    assert_eq!(c.preview_block_min, 100);
    // minMS is not minMs: the custom minimum falls back to the natural one.
    assert_eq!(
        c.human_delay,
        HumanDelay::Custom {
            min_ms: 800,
            max_ms: 900
        }
    );

    // Two agents and none chosen.
    let s = settings("typos.json5", Selection::channel("matrix"));
    assert!(warnings(&s).contains(&w("agents", WarningKind::Selection)));
    assert!(warnings(&s).contains(&w("channels.matrix", WarningKind::Selection)));
    assert_eq!(s.profile, ChannelProfile::GENERIC);
    assert_eq!(s.overrides.text_limit, Some(3000));
    let err = file("typos.json5")
        .settings(&Selection::channel("matrix").agent("ghost"))
        .unwrap_err();
    assert!(err.message.contains("configured: main, helper"), "{err}");
}

/// Reads `text` for telegram and returns the error's `Display`.
fn refused(text: &str) -> String {
    let err = OpenClawConfig::parse(text)
        .and_then(|c| c.settings(&Selection::channel("telegram")))
        .expect_err(text);
    err.to_string()
}

#[test]
fn invalid_values_are_refused_with_their_path_and_position() {
    let cases: &[(&str, &str)] = &[
        (
            "{ channels: { telegram: { textChunkLimit: 0 } } }",
            "line 1, column 43: channels.telegram.textChunkLimit: expected a whole number of at least 15, got 0",
        ),
        (
            "{ channels: { telegram: { textChunkLimit: '4000' } } }",
            "channels.telegram.textChunkLimit: expected a whole number of at least 15, got \"4000\"",
        ),
        (
            "{ channels: { telegram: { maxLinesPerMessage: 2 } } }",
            "channels.telegram.maxLinesPerMessage: expected a whole number of at least 3, got 2",
        ),
        (
            "{ agents: { defaults: { blockStreamingChunk: { minChars: -5 } } } }",
            "agents.defaults.blockStreamingChunk.minChars: expected a whole number of at least 1, got -5",
        ),
        (
            "{ agents: { defaults: { blockStreamingChunk: { maxChars: 1.5 } } } }",
            "got 1.5",
        ),
        (
            "{ agents: { defaults: { blockStreamingCoalesce: { idleMs: Infinity } } } }",
            "agents.defaults.blockStreamingCoalesce.idleMs: expected a whole number of at least 0, got Infinity",
        ),
        (
            "{ agents: { defaults: { blockStreamingChunk: { maxChars: 1e300 } } } }",
            "(too large)",
        ),
        (
            "{ agents: { defaults: { humanDelay: { mode: 'fast' } } } }",
            "agents.defaults.humanDelay.mode: expected one of \"off\", \"natural\", \"custom\", got \"fast\"",
        ),
        (
            "{ agents: { defaults: { humanDelay: { mode: 'custom', maxMs: 120000 } } } }",
            "agents.defaults.humanDelay.maxMs: at most 60000 ms between two blocks (got 120000)",
        ),
        (
            "{ agents: { defaults: { blockStreamingBreak: 'sometimes' } } }",
            "expected one of \"text_end\", \"message_end\", got \"sometimes\"",
        ),
        (
            "{ agents: { defaults: { blockStreamingDefault: true } } }",
            "agents.defaults.blockStreamingDefault: expected one of \"on\", \"off\", got true",
        ),
        (
            "{ agents: { defaults: { blockStreamingChunk: { breakPreference: 'word' } } } }",
            "expected one of \"paragraph\", \"newline\", \"sentence\", got \"word\"",
        ),
        (
            "{ channels: { telegram: { streaming: { mode: 'live' } } } }",
            "channels.telegram.streaming.mode: expected one of \"off\", \"partial\", \"block\", \"progress\"",
        ),
        (
            "{ channels: { telegram: { streaming: { block: { enabled: 'yes' } } } } }",
            "channels.telegram.streaming.block.enabled: expected true or false, got \"yes\"",
        ),
        (
            "{ channels: { telegram: { streaming: { chunkMode: 'words' } } } }",
            "expected one of \"length\", \"newline\", got \"words\"",
        ),
        (
            "{ agents: { defaults: [] } }",
            "agents.defaults: expected an object, got an array",
        ),
        (
            "{ channels: { telegram: { accounts: { a: 7 } } } }",
            "channels.telegram.accounts.a: expected an object, got 7",
        ),
        (
            "{ messages: { responsePrefix: 7 } }",
            "messages.responsePrefix: expected a string, got 7",
        ),
        (
            "{\n  channels: {\n    telegram: { textChunkLimit: 4000 }\n    discord: {}\n  }\n}",
            "line 4, column 5: expected ',' or '}', found 'd'",
        ),
        (
            "[1, 2]",
            "line 1, column 1: an OpenClaw configuration is an object ({ ... }), not an array",
        ),
        (
            "{ agents: { defaults: { humanDelay: { mode: natural } } } }",
            "line 1, column 45: unexpected word 'natural' (a text value needs quotes)",
        ),
    ];
    for (text, expected) in cases {
        let got = refused(text);
        assert!(
            got.contains(expected),
            "{text}\n  got: {got}\n  expected: {expected}"
        );
    }
}

#[test]
fn a_setting_the_library_refuses_is_an_error_at_resolve_time() {
    // The file is well formed, but the prefix leaves less than the smallest limit (29 UTF-16
    // units) of a 40-unit message.
    let text = "{ messages: { responsePrefix: 'A very long response prefix' }, \
                channels: { telegram: { textChunkLimit: 40 } } }";
    let s = OpenClawConfig::parse(text)
        .unwrap()
        .settings(&Selection::channel("telegram"))
        .unwrap();
    let err = s.resolve(&ConfigOverrides::default()).unwrap_err();
    assert!(err.to_string().contains("response_prefix"), "{err}");
    assert!(Engine::new(s.config(), 1).is_err());
}

/// What the chat shows first for `settings`: the first message of a short reply.
fn first_message(s: &OpenClawSettings) -> String {
    let resolved = s.resolve(&ConfigOverrides::default()).unwrap();
    let mut config = resolved.config().clone();
    config.human_delay = HumanDelay::Off;
    let mut sim = Sim::new(Engine::new(config, 1).unwrap());
    sim.push(Input::TextDelta("Hello there."))
        .push(Input::Finish);
    sim.run_until_idle();
    sim.sent_texts().first().cloned().expect("a message")
}

/// The agent marked `default: true` is chosen when none is named and no binding routes the
/// channel: its identity gives the `auto` prefix, its humanDelay applies, nothing is warned
/// about but the binding that depends on a conversation.
#[test]
fn the_agent_marked_default_is_chosen_when_none_is_named() {
    let s = settings("agents-bindings.json5", Selection::channel("discord"));
    assert_eq!(s.agent.as_deref(), Some("main"));
    assert_eq!(
        warnings(&s),
        [w("bindings[0].match.peer", WarningKind::Ignored)],
        "{:#?}",
        s.warnings
    );
    assert!(
        s.warnings[0].message.contains("`helper`"),
        "{}",
        s.warnings[0]
    );
    assert_eq!(s.warnings[0].line, 20);
    let c = s.config();
    assert_eq!(c.human_delay, HumanDelay::Natural);
    assert_eq!(c.reasoning, ReasoningMode::Off);
    assert_eq!(first_message(&s), "[Samantha] Hello there.");
}

/// Bindings route a channel and account to an agent as OpenClaw does: a binding for the
/// account before one for the whole channel (`*`), a binding without `accountId` for the
/// default account only, an unknown agent falling back to the default one with a warning,
/// and an agent named by the host before any binding.
#[test]
fn bindings_choose_the_agent_for_a_channel_and_account() {
    let agent_of = |selection: Selection| {
        let s = settings("agents-bindings.json5", selection);
        (s.agent.clone().unwrap(), first_message(&s), s)
    };
    let (agent, first, s) = agent_of(Selection::channel("telegram"));
    assert_eq!(
        (agent.as_str(), first.as_str()),
        ("support", "[Support] Hello there.")
    );
    assert_eq!(warnings(&s), []);
    let (agent, first, s) = agent_of(Selection::channel("telegram").account("alerts"));
    assert_eq!(
        (agent.as_str(), first.as_str()),
        ("ops", "[Ops] Hello there.")
    );
    assert_eq!(s.config().reasoning, ReasoningMode::On);
    // Slack: the default account is bound, the work account is not.
    let (agent, first, s) = agent_of(Selection::channel("slack"));
    assert_eq!(
        (agent.as_str(), first.as_str()),
        ("helper", "[Helper] Hello there.")
    );
    assert_eq!(s.config().reasoning, ReasoningMode::Stream);
    let (agent, _, _) = agent_of(Selection::channel("slack").account("work"));
    assert_eq!(agent, "main");
    // A binding to an agent that is not configured.
    let (agent, first, s) = agent_of(Selection::channel("signal"));
    assert_eq!(
        (agent.as_str(), first.as_str()),
        ("main", "[Samantha] Hello there.")
    );
    assert_eq!(
        warnings(&s),
        [w("bindings[4].agentId", WarningKind::Selection)]
    );
    assert!(
        s.warnings[0].message.contains("`ghost`"),
        "{}",
        s.warnings[0]
    );
    // Named by the host: no binding consulted.
    let (agent, first, _) = agent_of(Selection::channel("telegram").agent("helper"));
    assert_eq!(
        (agent.as_str(), first.as_str()),
        ("helper", "[Helper] Hello there.")
    );
}

/// Both of OpenClaw's agent forms are read; with both present, OpenClaw reads
/// `agents.entries` alone, and so does this reader (the list is reported). Several agents
/// marked default: the first counts, with a warning. Bad shapes are errors with their path.
#[test]
fn agent_forms_defaults_and_bad_bindings() {
    let read = |text: &str, selection: Selection| {
        OpenClawConfig::parse(text)
            .unwrap()
            .settings(&selection)
            .unwrap()
    };
    let both = "{ agents: { entries: { a: { identity: { name: 'A' } } }, \
                list: [{ id: 'b', default: true }] }, messages: { responsePrefix: 'auto' } }";
    let s = read(both, Selection::channel("telegram"));
    assert_eq!(s.agent.as_deref(), Some("a"));
    assert!(
        warnings(&s).contains(&w("agents.list", WarningKind::Ignored)),
        "{:#?}",
        s.warnings
    );
    assert_eq!(first_message(&s), "[A] Hello there.");

    let entries = "{ agents: { entries: { a: {}, b: { default: true }, c: { default: true } } } }";
    let s = read(entries, Selection::channel("telegram"));
    assert_eq!(s.agent.as_deref(), Some("b"));
    assert!(
        warnings(&s).contains(&w("agents.entries.c.default", WarningKind::Ignored)),
        "{:#?}",
        s.warnings
    );

    for (text, expected) in [
        (
            "{ agents: { list: [{ id: 'a', default: 'yes' }] } }",
            "agents.list[0].default: expected true or false, got \"yes\"",
        ),
        (
            "{ agents: { list: [{ name: 'a' }] } }",
            "agents.list[0]: an agent needs an `id`",
        ),
        (
            "{ bindings: { agentId: 'a' } }",
            "bindings: expected an array, got an object",
        ),
        (
            "{ bindings: [{ agentId: 'a', match: { channel: 'telegram', accountId: 7 } }] }",
            "bindings[0].match.accountId: expected a string, got 7",
        ),
        (
            "{ bindings: [{ agentId: 'a' }] }",
            "bindings[0]: a binding needs a `match`",
        ),
    ] {
        let err = OpenClawConfig::parse(text)
            .unwrap()
            .settings(&Selection::channel("telegram"))
            .unwrap_err();
        assert!(err.to_string().ends_with(expected), "{err} / {expected}");
    }
}
