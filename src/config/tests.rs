use super::*;

fn resolve(profile: &ChannelProfile, layers: &[&ConfigOverrides]) -> ResolvedConfig {
    match Config::resolve(profile, layers) {
        Ok(r) => r,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

fn error_of(config: Config) -> String {
    match config.validate() {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn library_defaults() {
    let c = Config::default();
    assert_eq!(c.channel, "generic");
    assert_eq!(
        (c.text_limit, c.metric, c.preview_limit),
        (4000, LengthMetric::Chars, 4000)
    );
    assert_eq!((c.chunk_min, c.chunk_max), (800, 1200));
    assert_eq!(c.break_preference, BreakPreference::Paragraph);
    assert_eq!(c.chunk_mode, ChunkMode::Length);
    assert_eq!(c.break_mode, BreakMode::TextEnd);
    assert!(c.block_streaming);
    assert_eq!(
        (c.coalesce_min, c.coalesce_max, c.coalesce_idle_ms),
        (None, None, 1000)
    );
    assert_eq!(c.human_delay, HumanDelay::Off);
    assert_eq!(c.delivery_timeout_ms, 15_000);
    assert_eq!(c.response_prefix, None);
    assert!(!c.prefix_every_message);
    assert_eq!(c.reasoning, ReasoningMode::Off);
    assert!(!c.require_final_tag);
    assert_eq!(c.silent_token.as_deref(), Some("NO_REPLY"));
    assert_eq!(c.heartbeat_token.as_deref(), Some("HEARTBEAT_OK"));
    assert_eq!(c.preview, PreviewMode::Off);
    assert_eq!(c.preview_throttle_ms, 1000);
    assert_eq!(c.preview_cursor.as_deref(), Some("█"));
    assert_eq!(c.preview_min_initial_units, 30);
    assert_eq!((c.preview_block_min, c.preview_block_max), (200, 800));
    assert_eq!(c.preview_transport, PreviewTransport::Edit);
    assert!(!c.preview_expandable_quote);
    assert!(Config::for_channel(&ChannelProfile::TELEGRAM).preview_expandable_quote);

    let r = ResolvedConfig::default();
    assert_eq!(r.text_budget(), 4000);
    assert_eq!(r.response_prefix(), None);
    assert_eq!(
        r.chunker(),
        ChunkerConfig {
            min: 800,
            max: 1200,
            break_preference: BreakPreference::Paragraph,
            flush_on_paragraph: false,
            metric: LengthMetric::Chars,
        }
    );
    assert_eq!(
        r.splitter(),
        SplitConfig {
            limit: 4000,
            metric: LengthMetric::Chars,
            mode: SplitMode::Length,
            max_lines: None,
            ..SplitConfig::default()
        }
    );
    let co = r.coalescer();
    assert_eq!((co.min, co.max, co.idle_ms), (800, 4000, 1000));
    assert_eq!(co.joiner(), "\n\n");
    assert!(!co.flush_on_enqueue);
    assert_eq!(r.config().coalesce_min, Some(800));
    assert_eq!(r.config().coalesce_max, Some(4000));
}

#[test]
fn every_profile_resolves() {
    for p in ChannelProfile::ALL {
        let r = resolve(&p, &[]);
        assert_eq!(r.config().channel, p.name);
        assert_eq!(r.config().text_limit, p.text_limit);
        assert_eq!(r.config().metric, p.metric);
        assert_eq!(r.config().preview_limit, p.preview_limit);
        assert_eq!(r.splitter().limit, p.text_limit);
        assert_eq!(r.splitter().metric, p.metric);
        assert_eq!(r.splitter().max_lines, p.max_lines);
        assert_eq!(r.chunker().metric, p.metric);
        assert_eq!(r.coalescer().metric, p.metric);
        assert_eq!(r.coalescer().max, p.text_limit);
        assert_eq!(r.coalescer().min, p.coalesce_min.unwrap_or(800));
        assert_eq!(r.coalescer().idle_ms, 1000);
        assert_eq!(r.coalescer().max_lines, p.max_lines);
    }
    let discord = resolve(&ChannelProfile::DISCORD, &[]);
    assert_eq!(discord.splitter().max_lines, Some(17));
    assert_eq!(discord.coalescer().min, 1500);
    assert_eq!(discord.coalescer().max, 2000);
    let telegram = resolve(&ChannelProfile::TELEGRAM, &[]);
    assert_eq!(telegram.config().preview_limit, 4096);
    assert_eq!(telegram.splitter().metric, LengthMetric::Utf16);
}

#[test]
fn layering_order() {
    let account = ConfigOverrides {
        chunk_min: Some(300),
        chunk_max: Some(900),
        coalesce_min: Some(Some(700)),
        text_limit: Some(1800),
        silent_token: Some(None),
        ..ConfigOverrides::default()
    };
    let explicit = ConfigOverrides {
        chunk_max: Some(600),
        coalesce_min: Some(None),
        human_delay: Some(HumanDelay::Natural),
        ..ConfigOverrides::default()
    };
    // Channel beats default.
    let channel = resolve(&ChannelProfile::DISCORD, &[]);
    assert_eq!(channel.config().text_limit, 2000);
    assert_eq!(channel.coalescer().min, 1500);
    // Account beats channel.
    let acc = resolve(&ChannelProfile::DISCORD, &[&account]);
    assert_eq!(acc.config().text_limit, 1800);
    assert_eq!((acc.chunker().min, acc.chunker().max), (300, 900));
    assert_eq!(acc.coalescer().min, 700);
    assert_eq!(acc.coalescer().max, 1800);
    assert_eq!(acc.config().silent_token, None);
    // Explicit beats account; untouched account values stay.
    let exp = resolve(&ChannelProfile::DISCORD, &[&account, &explicit]);
    assert_eq!((exp.chunker().min, exp.chunker().max), (300, 600));
    assert_eq!(exp.config().text_limit, 1800);
    assert_eq!(
        exp.coalescer().min,
        300,
        "cleared coalesce min falls back to chunk min"
    );
    assert_eq!(exp.config().human_delay, HumanDelay::Natural);
    assert_eq!(exp.config().silent_token, None);
    // Order of layers matters: the later one wins.
    let reversed = resolve(&ChannelProfile::DISCORD, &[&explicit, &account]);
    assert_eq!(reversed.chunker().max, 900);
    assert_eq!(reversed.coalescer().min, 700);
}

#[test]
fn every_override_applies() {
    let o = ConfigOverrides {
        text_limit: Some(3000),
        metric: Some(LengthMetric::Bytes),
        preview_limit: Some(3500),
        max_lines: Some(Some(40)),
        chunk_min: Some(50),
        chunk_max: Some(60),
        break_preference: Some(BreakPreference::Sentence),
        chunk_mode: Some(ChunkMode::Newline),
        break_mode: Some(BreakMode::MessageEnd),
        block_streaming: Some(false),
        coalesce_min: Some(Some(30)),
        coalesce_max: Some(Some(40)),
        coalesce_idle_ms: Some(0),
        human_delay: Some(HumanDelay::Custom {
            min_ms: 1,
            max_ms: 2,
        }),
        delivery_timeout_ms: Some(0),
        response_prefix: Some(Some("[{model}]".into())),
        prefix_every_message: Some(true),
        model: Some(Some("openai/gpt-4o-latest".into())),
        provider: Some(Some("azure".into())),
        thinking_level: Some(Some("low".into())),
        identity_name: Some(Some("Bot".into())),
        reasoning: Some(ReasoningMode::Stream),
        require_final_tag: Some(true),
        silent_token: Some(Some(" SHH ".into())),
        heartbeat_token: Some(None),
        preview: Some(PreviewMode::Partial),
        preview_throttle_ms: Some(2000),
        preview_cursor: Some(None),
        preview_min_initial_units: Some(5),
        preview_block_min: Some(50),
        preview_block_max: Some(60),
        preview_transport: Some(PreviewTransport::Draft),
        preview_expandable_quote: Some(true),
        media_roots: Some(vec!["/srv/media/".into()]),
        media_allow_http: Some(false),
        format: Some(crate::Format::SlackMrkdwn),
        table_mode: Some(Some(crate::TableMode::Bullets)),
        allow_mass_mentions: Some(true),
        caption_limit: Some(Some(300)),
    };
    let r = resolve(&ChannelProfile::GENERIC, &[&o]);
    let c = r.config();
    assert_eq!(
        (c.format, c.table_mode, c.allow_mass_mentions),
        (
            crate::Format::SlackMrkdwn,
            Some(crate::TableMode::Bullets),
            true
        )
    );
    assert_eq!(
        (c.text_limit, c.metric, c.preview_limit, c.max_lines),
        (3000, LengthMetric::Bytes, 3500, Some(40))
    );
    assert_eq!((c.chunk_min, c.chunk_max), (50, 60));
    assert_eq!(c.break_preference, BreakPreference::Sentence);
    assert_eq!(c.chunk_mode, ChunkMode::Newline);
    assert_eq!(c.break_mode, BreakMode::MessageEnd);
    assert!(!c.block_streaming);
    assert_eq!(
        (c.coalesce_min, c.coalesce_max, c.coalesce_idle_ms),
        (Some(30), Some(40), 0)
    );
    assert_eq!(
        c.human_delay,
        HumanDelay::Custom {
            min_ms: 1,
            max_ms: 2
        }
    );
    assert_eq!(c.delivery_timeout_ms, 0);
    assert!(c.prefix_every_message);
    assert_eq!(r.response_prefix(), Some("[gpt-4o]"));
    assert_eq!(c.prefix_context.provider.as_deref(), Some("azure"));
    assert_eq!(c.prefix_context.thinking_level.as_deref(), Some("low"));
    assert_eq!(c.prefix_context.identity_name.as_deref(), Some("Bot"));
    assert_eq!(c.reasoning, ReasoningMode::Stream);
    assert!(c.require_final_tag);
    assert_eq!(c.silent_token.as_deref(), Some("SHH"), "tokens are trimmed");
    assert_eq!(c.heartbeat_token, None);
    assert_eq!(c.preview, PreviewMode::Partial);
    assert_eq!(c.preview_throttle_ms, 2000);
    assert_eq!(c.preview_cursor, None);
    assert_eq!(c.preview_min_initial_units, 5);
    assert_eq!((c.preview_block_min, c.preview_block_max), (50, 60));
    assert_eq!(c.preview_transport, PreviewTransport::Draft);
    assert!(c.preview_expandable_quote);
    assert_eq!(c.media.roots, ["/srv/media"], "roots are written resolved");
    assert!(!c.media.allow_http);
    // Derived settings follow.
    assert!(r.chunker().flush_on_paragraph);
    assert!(r.coalescer().flush_on_enqueue);
    assert_eq!(r.coalescer().joiner(), " ");
    assert_eq!(r.splitter().mode, SplitMode::Newline);
    assert_eq!(
        r.splitter().max_lines,
        Some(39),
        "a line kept for the prefix, which may stand on its own line"
    );
    assert_eq!(r.coalescer().max_lines, Some(39));
    assert_eq!(r.preview_chunker().min, 50);
    assert_eq!(r.preview_chunker().max, 60);
    assert!(!r.preview_chunker().flush_on_paragraph);
    // "[gpt-4o]" + " " = 9 bytes.
    assert_eq!(r.text_budget(), 3000 - 9);
    assert_eq!(r.splitter().limit, 3000 - 9);
}

#[test]
fn clamping() {
    let o = ConfigOverrides {
        chunk_min: Some(0),
        chunk_max: Some(24),
        coalesce_idle_ms: Some(10_000_000),
        preview_throttle_ms: Some(10),
        ..ConfigOverrides::default()
    };
    let r = resolve(&ChannelProfile::GENERIC, &[&o]);
    assert_eq!((r.chunker().min, r.chunker().max), (1, 24));
    assert_eq!(r.coalescer().idle_ms, MAX_IDLE_MS);
    assert_eq!(r.config().preview_throttle_ms, MIN_PREVIEW_THROTTLE_MS);

    // max >= min: a max below min is raised to min.
    let o = ConfigOverrides {
        chunk_min: Some(1000),
        chunk_max: Some(500),
        ..ConfigOverrides::default()
    };
    let r = resolve(&ChannelProfile::GENERIC, &[&o]);
    assert_eq!((r.chunker().min, r.chunker().max), (1000, 1000));

    // max <= text limit, then min <= max.
    let o = ConfigOverrides {
        chunk_min: Some(5000),
        chunk_max: Some(9000),
        coalesce_min: Some(Some(9000)),
        coalesce_max: Some(Some(9000)),
        preview_throttle_ms: Some(u64::MAX),
        preview_min_initial_units: Some(100_000),
        preview_block_min: Some(0),
        preview_block_max: Some(100_000),
        ..ConfigOverrides::default()
    };
    let r = resolve(&ChannelProfile::DISCORD, &[&o]);
    // The limit forces max down: min comes down in proportion (5000/9000 of 2000).
    assert_eq!((r.chunker().min, r.chunker().max), (1111, 2000));
    assert_eq!((r.coalescer().min, r.coalescer().max), (2000, 2000));
    assert_eq!(r.config().preview_throttle_ms, MAX_PREVIEW_THROTTLE_MS);
    assert_eq!(r.config().preview_min_initial_units, 2000);
    assert_eq!(
        (r.preview_chunker().min, r.preview_chunker().max),
        (1, 2000)
    );

    // Discord's coalesce min (1500) above an explicit coalesce max raises the max.
    let o = ConfigOverrides {
        coalesce_max: Some(Some(1000)),
        ..ConfigOverrides::default()
    };
    let r = resolve(&ChannelProfile::DISCORD, &[&o]);
    assert_eq!((r.coalescer().min, r.coalescer().max), (1500, 1500));

    // The smallest valid limit of each metric works and clamps everything under it.
    for metric in LengthMetric::ALL {
        let smallest = metric.min_limit();
        let o = ConfigOverrides {
            metric: Some(metric),
            text_limit: Some(smallest),
            preview_limit: Some(smallest),
            max_lines: Some(Some(MIN_MAX_LINES)),
            ..ConfigOverrides::default()
        };
        let r = resolve(&ChannelProfile::GENERIC, &[&o]);
        assert_eq!(r.chunker().max, smallest);
        assert!(r.chunker().min < smallest, "min scaled down with max");
        assert_eq!(r.coalescer().max, smallest);
        assert_eq!(r.splitter().limit, smallest);
    }
    assert_eq!(MIN_TEXT_LIMIT, LengthMetric::Graphemes.min_limit());
}

#[test]
fn prefix_reserves_room() {
    let o = ConfigOverrides {
        response_prefix: Some(Some("{identity.name}:".into())),
        identity_name: Some(Some("Ana".into())),
        ..ConfigOverrides::default()
    };
    let r = resolve(&ChannelProfile::DISCORD, &[&o]);
    assert_eq!(r.response_prefix(), Some("Ana:"));
    assert_eq!(r.text_budget(), 2000 - 5);
    assert_eq!(r.coalescer().max, 1995);
    assert_eq!(r.splitter().limit, 1995);
    assert!(r.chunker().max <= 1995);
    // A prefix ending in a space still needs room for a line break (before a block
    // construct, the prefix goes on its own line); one ending in a line break does not.
    let o = ConfigOverrides {
        response_prefix: Some(Some("🤖 ".into())),
        ..ConfigOverrides::default()
    };
    let r = resolve(&ChannelProfile::TELEGRAM, &[&o]);
    assert_eq!(
        r.text_budget(),
        4000 - 4,
        "🤖 is 2 UTF-16 units, plus the space, plus a line break"
    );
    let o = ConfigOverrides {
        response_prefix: Some(Some("🤖\n".into())),
        ..ConfigOverrides::default()
    };
    let r = resolve(&ChannelProfile::TELEGRAM, &[&o]);
    assert_eq!(r.text_budget(), 4000 - 3, "🤖 and its line break");
    // With a prefix, the line cap keeps a line for it, and must leave a piece its 3.
    let o = ConfigOverrides {
        response_prefix: Some(Some("[bot]".into())),
        ..ConfigOverrides::default()
    };
    let r = resolve(&ChannelProfile::DISCORD, &[&o]);
    assert_eq!(r.splitter().max_lines, Some(16));
    let mut c = Config::for_channel(&ChannelProfile::DISCORD);
    c.response_prefix = Some("[bot]".into());
    c.max_lines = Some(MIN_MAX_LINES);
    let e = c.validate().map(|_| ()).unwrap_err().to_string();
    assert!(
        e.contains("max_lines must be at least 4 with a response_prefix"),
        "{e}"
    );
    // An empty or blank prefix is no prefix.
    for blank in ["", "   "] {
        let o = ConfigOverrides {
            response_prefix: Some(Some(blank.into())),
            ..ConfigOverrides::default()
        };
        let r = resolve(&ChannelProfile::GENERIC, &[&o]);
        assert_eq!(r.response_prefix(), None);
        assert_eq!(r.config().response_prefix, None);
        assert_eq!(r.text_budget(), 4000);
    }
}

#[test]
fn errors_name_the_field() {
    let with = |o: ConfigOverrides| {
        let mut c = Config::default();
        c.apply(&o);
        error_of(c)
    };
    let e = with(ConfigOverrides {
        text_limit: Some(0),
        ..ConfigOverrides::default()
    });
    assert!(e.contains("text_limit"), "{e}");
    let e = with(ConfigOverrides {
        text_limit: Some(MIN_TEXT_LIMIT - 1),
        ..ConfigOverrides::default()
    });
    assert!(e.contains("text_limit"), "{e}");
    let e = with(ConfigOverrides {
        preview_limit: Some(3),
        ..ConfigOverrides::default()
    });
    assert!(e.contains("preview_limit"), "{e}");
    for lines in [0, MIN_MAX_LINES - 1] {
        let e = with(ConfigOverrides {
            max_lines: Some(Some(lines)),
            ..ConfigOverrides::default()
        });
        assert!(e.contains("max_lines"), "{e}");
    }
    let e = with(ConfigOverrides {
        human_delay: Some(HumanDelay::Custom {
            min_ms: 0,
            max_ms: HumanDelay::CUSTOM_LIMIT_MS + 1,
        }),
        ..ConfigOverrides::default()
    });
    assert!(e.contains("human_delay"), "{e}");
    let e = with(ConfigOverrides {
        human_delay: Some(HumanDelay::Custom {
            min_ms: u64::MAX,
            max_ms: 0,
        }),
        ..ConfigOverrides::default()
    });
    assert!(e.contains("human_delay"), "{e}");
    let e = with(ConfigOverrides {
        silent_token: Some(Some("  ".into())),
        ..ConfigOverrides::default()
    });
    assert!(e.contains("silent_token"), "{e}");
    let e = with(ConfigOverrides {
        heartbeat_token: Some(Some(String::new())),
        ..ConfigOverrides::default()
    });
    assert!(e.contains("heartbeat_token"), "{e}");
    let e = with(ConfigOverrides {
        text_limit: Some(40),
        response_prefix: Some(Some("a long response prefix".into())),
        ..ConfigOverrides::default()
    });
    assert!(e.contains("response_prefix"), "{e}");
    assert!(
        e.contains("at least 47"),
        "24 + 23 for the prefix and its space: {e}"
    );
    assert!(matches!(
        Config {
            text_limit: 0,
            ..Config::default()
        }
        .validate(),
        Err(Error::InvalidConfig(_))
    ));
}

#[test]
fn validate_is_idempotent() {
    let o = ConfigOverrides {
        chunk_min: Some(0),
        chunk_max: Some(99_999),
        response_prefix: Some(Some("[{model}] ".into())),
        model: Some(Some("a/b-20240101".into())),
        ..ConfigOverrides::default()
    };
    let once = resolve(&ChannelProfile::SLACK, &[&o]);
    let twice = match once.config().validate() {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(twice.chunker(), once.chunker());
    assert_eq!(twice.coalescer(), once.coalescer());
    assert_eq!(twice.response_prefix(), Some("[b] "));
}

#[test]
fn enum_names() {
    assert_eq!(ChunkMode::from_name("Paragraph"), Some(ChunkMode::Newline));
    assert_eq!(ChunkMode::from_name("length"), Some(ChunkMode::Length));
    assert_eq!(ChunkMode::Newline.name(), "newline");
    assert_eq!(
        BreakMode::from_name("message-end"),
        Some(BreakMode::MessageEnd)
    );
    assert_eq!(BreakMode::from_name(" TEXT_END "), Some(BreakMode::TextEnd));
    assert_eq!(
        ReasoningMode::from_name("stream"),
        Some(ReasoningMode::Stream)
    );
    assert_eq!(PreviewMode::from_name("block"), Some(PreviewMode::Block));
    assert_eq!(PreviewMode::from_name("edit"), None);
    assert_eq!(
        PreviewTransport::from_name("Draft"),
        Some(PreviewTransport::Draft)
    );
    assert_eq!(PreviewTransport::Edit.name(), "edit");
    assert_eq!(PreviewTransport::from_name("bubble"), None);
    assert_eq!(HumanDelay::Natural.name(), "natural");
}

#[test]
fn preview_limit_must_hold_a_tail_window_with_its_cursor() {
    let mut c = Config::for_channel(&ChannelProfile::TELEGRAM);
    c.preview = PreviewMode::Partial;
    // The smallest accepted limit, with a cursor too long for a tail window beside it.
    c.preview_limit = LengthMetric::Utf16.min_limit();
    c.preview_cursor = Some("▌".repeat(20));
    let e = error_of(c.clone());
    assert!(
        e.contains("preview_limit") && e.contains("preview_cursor"),
        "{e}"
    );
    // The same limit is fine with previews off (nothing is rendered).
    c.preview = PreviewMode::Off;
    assert!(c.validate().is_ok());
    // A long cursor needs a larger limit.
    c.preview = PreviewMode::Block;
    c.preview_limit = 100;
    c.preview_cursor = Some("▌".repeat(90));
    let e = error_of(c.clone());
    assert!(e.contains("preview_cursor"), "{e}");
    c.preview_cursor = Some("▌".into());
    assert!(c.validate().is_ok());
}

#[test]
fn media_roots_must_be_absolute_plain_directories() {
    let with_roots = |roots: &[&str]| Config {
        media: MediaPolicy::with_roots(roots.iter().copied()),
        ..Config::default()
    };
    for (roots, message) in [
        (&[""][..], "media.roots[0] must not be empty (got \"\")"),
        (
            &["/srv/media", "media"],
            "media.roots[1] must be an absolute path (`/…`, or `C:\\…` on Windows) (got \"media\")",
        ),
        (
            &["~/media"],
            "media.roots[0] must be an absolute path (`/…`, or `C:\\…` on Windows) (got \"~/media\")",
        ),
        (
            &["./media"],
            "media.roots[0] must be an absolute path (`/…`, or `C:\\…` on Windows) (got \"./media\")",
        ),
        (
            &["/srv/media/../etc"],
            "media.roots[0] must not hold a `..` component (got \"/srv/media/../etc\")",
        ),
        (
            &["C:\\media\\.."],
            "media.roots[0] must not hold a `..` component (got \"C:\\\\media\\\\..\")",
        ),
        (
            &["/"],
            "media.roots[0] must not be the top of the file system (every file would be media) (got \"/\")",
        ),
        (
            &["C:/"],
            "media.roots[0] must not be the top of the file system (every file would be media) (got \"C:/\")",
        ),
        (
            &["/srv/a\\b"],
            "media.roots[0] must not hold a backslash (a POSIX path is `/`-separated) (got \"/srv/a\\\\b\")",
        ),
        (
            &["/srv/\tmedia"],
            "media.roots[0] must not hold a control character (got \"/srv/\\tmedia\")",
        ),
    ] {
        let err = with_roots(roots).validate().unwrap_err();
        assert_eq!(err.to_string(), format!("invalid configuration: {message}"));
        assert!(
            crate::Engine::new(with_roots(roots), 1).is_err(),
            "{roots:?}"
        );
    }
    let ok = with_roots(&["/srv//media/./", "c:/Media\\Out"])
        .validate()
        .unwrap();
    assert_eq!(ok.config().media.roots, ["/srv/media", "C:\\Media\\Out"]);
    assert_eq!(
        ok.config().media.clone().checked(),
        Ok(ok.config().media.clone())
    );
}

#[test]
fn rendered_formats_refuse_limits_too_small_for_their_growth() {
    let config = |channel: &ChannelProfile, limit: usize| {
        let mut c = Config::for_channel(channel);
        c.text_limit = limit;
        c
    };
    // Slack: 10 × (8 + 1) + 3 characters; Telegram: 4 × (8 + 2) + 3 UTF-16 units.
    for (profile, smallest) in [(ChannelProfile::SLACK, 93), (ChannelProfile::TELEGRAM, 43)] {
        let e = error_of(config(&profile, smallest - 1));
        assert!(e.contains("text_limit must be at least"), "{e}");
        assert!(e.contains(&format!("at least {smallest} ")), "{e}");
        assert!(config(&profile, smallest).validate().is_ok());
        assert!(crate::Engine::new(config(&profile, smallest), 1).is_ok());
    }
    // Markdown counts its own text: the metric's smallest limit is enough.
    assert!(config(&ChannelProfile::GENERIC, 24).validate().is_ok());
}
