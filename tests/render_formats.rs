//! Rendered formats judged from outside (SPEC §16): Telegram HTML read with Telegram's rules
//! by a reader written here, its visible characters and their looks equal to what
//! pulldown-cmark reads from the same Markdown, the entities equal to the HTML's spans, and
//! the marker formats checked for their escaping and markers.

mod render_checks;

use render_checks::check_telegram;
use replystream::{Format, RenderOptions, TableMode, render};

fn opts() -> RenderOptions {
    RenderOptions::default()
}

fn html(md: &str) -> String {
    render(md, Format::TelegramHtml, &opts()).text
}

const CASES: &[&str] = &[
    "Plain text.",
    "a **bold** and *italic* and ***both*** and ~~gone~~ and `code`",
    "snake_case_word and 2*3*4 and * not emphasis *",
    "**unclosed bold and _unclosed italic",
    "stray < and > and & and <b>html</b> and &amp; &lt;",
    "[a link](https://example.com/?q=1&r=\"2\") and <https://auto.link/x> and ![img](https://i.io/p.png)",
    "[relative](docs/page) and [empty]() and ![](https://i.io/a.png)",
    "# Title\n\nSome text.\n\n## Sub *title*",
    "Setext\n======\n\nSub\n---",
    "- one\n- two\n  - nested **bold**\n    1. deep\n    2. deeper\n- three",
    "3. three\n4. four\n\n1) paren",
    "> quoted **text**\n> more\nlazy\n\n> > nested",
    "```rust\nfn main() { let a = 1 < 2 && b > c; }\n```\n\n~~~\ntilde\n~~~",
    "    indented code\n    more",
    "| a | b |\n|:--|--:|\n| 1 | **2** |\n| 三 | 😀 |",
    "text\n\n---\n\nafter rule",
    "line one  \nline two\\\nline three\nline four",
    "`` code with ` tick `` and `unclosed",
    "emoji 👨‍👩‍👧 **粗体** _斜体_ [链接](https://例子.com)",
    "1. item\n\n   continued paragraph\n\n   ```\n   code in item\n   ```\n2. next",
    "- [ ] todo\n- [x] done",
    "a\\*b\\* and \\_c\\_ and \\\\",
    "**bold [link](https://x.io) inside**",
    "*a **b** c*",
    "_under_score_ and __strong__ and ___both___",
    "~single~ and ~~double~~ and ~~~three~~~",
    "x\r\ny **b**\r\n\r\n- i\r\n",
];

#[test]
fn telegram_html_is_accepted_and_shows_what_commonmark_shows() {
    for md in CASES {
        check_telegram(md);
    }
}

#[test]
fn corpus_replies_render_for_telegram_as_commonmark_reads_them() {
    for name in [
        "lists-tables.md",
        "prose-paragraphs.md",
        "code-heavy.md",
        "unicode-mix.md",
        "openclaw-streaming-notes.md",
        "reasoning-stream-design.md",
        "directives-and-thinking.md",
        "unclosed-fence.md",
        "no-breaks.md",
    ] {
        let md =
            std::fs::read_to_string(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        check_telegram(&md);
    }
}

#[test]
fn exact_telegram_html() {
    assert_eq!(
        html("**a** < b & `c<d>`"),
        "<b>a</b> &lt; b &amp; <code>c&lt;d&gt;</code>"
    );
    assert_eq!(
        html("```py\nprint(\"x\")\n```"),
        "<pre><code class=\"language-py\">print(\"x\")</code></pre>"
    );
    assert_eq!(
        html("[q](https://x.io/?a=\"b\"&c)"),
        "<a href=\"https://x.io/?a=&quot;b&quot;&amp;c\">q</a>"
    );
    assert_eq!(html("- a\n  - b\n1. c\n2. d"), "• a\n  • b\n\n1. c\n2. d");
    assert_eq!(html("> q\n\n# H"), "<blockquote>q</blockquote>\n\n<b>H</b>");
    assert_eq!(
        html("![alt](https://i.io/p.png)"),
        "<a href=\"https://i.io/p.png\">alt</a>"
    );
}

#[test]
fn entities_count_utf16_units() {
    let r = render(
        "😀 **粗体** [l](https://x.io)",
        Format::TelegramEntities,
        &opts(),
    );
    assert_eq!(r.text, "😀 粗体 l");
    let got: Vec<_> = r
        .entities
        .iter()
        .map(|e| (e.kind.name(), e.offset, e.length))
        .collect();
    assert_eq!(got, [("bold", 3, 2), ("text_link", 6, 1)]);
    assert_eq!(r.entities[1].url.as_deref(), Some("https://x.io"));
}

#[test]
fn table_modes() {
    let md = "| name | qty |\n|:--|--:|\n| 苹果 | 3 |\n| pear | 12 |";
    let code = |mode| {
        render(
            md,
            Format::Plain,
            &RenderOptions {
                table_mode: Some(mode),
                ..opts()
            },
        )
        .text
    };
    assert_eq!(
        code(TableMode::Code),
        "name | qty\n-----|----\n苹果 |   3\npear |  12"
    );
    assert_eq!(
        code(TableMode::Bullets),
        "• name: 苹果; qty: 3\n• name: pear; qty: 12"
    );
    assert_eq!(code(TableMode::Off), md);
    let discord = render(md, Format::Discord, &opts()).text;
    assert_eq!(
        discord,
        "```\nname | qty\n-----|----\n苹果 |   3\npear |  12\n```"
    );
    assert_eq!(render(md, Format::Markdown, &opts()).text, md);
    let bullets = RenderOptions {
        table_mode: Some(TableMode::Bullets),
        ..opts()
    };
    assert_eq!(
        render(md, Format::Markdown, &bullets).text,
        "- name: 苹果; qty: 3\n- name: pear; qty: 12"
    );
}

#[test]
fn discord_neutralises_mass_mentions_outside_code() {
    let md = "hey @everyone and @here\n\n```\n@everyone\n```";
    let out = render(md, Format::Discord, &opts()).text;
    assert_eq!(
        out,
        "hey @\u{200B}everyone and @\u{200B}here\n\n```\n@everyone\n```"
    );
    let allowed = RenderOptions {
        allow_mass_mentions: true,
        ..opts()
    };
    assert_eq!(render(md, Format::Discord, &allowed).text, md);
    assert_eq!(render(md, Format::Markdown, &opts()).text, md);
}

#[test]
fn slack_whatsapp_and_plain() {
    let md =
        "**b** _i_ ~~s~~ `c` [t](https://x.io/a|b) <tag> & 1 > 0\n\n```\nx < y\n```\n\n> q\n> r";
    assert_eq!(
        render(md, Format::SlackMrkdwn, &opts()).text,
        "*b* _i_ ~s~ `c` <https://x.io/a%7Cb|t> &lt;tag&gt; &amp; 1 &gt; 0\n\n```x &lt; y```\n\n> q\n> r"
    );
    assert_eq!(
        render(md, Format::Whatsapp, &opts()).text,
        "*b* _i_ ~s~ `c` t (https://x.io/a|b) <tag> & 1 > 0\n\n```x < y```\n\n> q\n> r"
    );
    assert_eq!(
        render(md, Format::Plain, &opts()).text,
        "b i s c t (https://x.io/a|b) <tag> & 1 > 0\n\nx < y\n\n> q\n> r"
    );
}

#[test]
fn reasoning_quote_is_expandable() {
    let q = RenderOptions {
        quote: true,
        ..opts()
    };
    assert_eq!(
        render("think **hard**", Format::TelegramHtml, &q).text,
        "<blockquote expandable>think <b>hard</b></blockquote>"
    );
    let e = render("a\n\n> b", Format::TelegramEntities, &q);
    let kinds: Vec<_> = e.entities.iter().map(|e| e.kind.name()).collect();
    assert_eq!(kinds, ["expandable_blockquote"]);
}

#[test]
fn names_round_trip() {
    for f in Format::ALL {
        assert_eq!(Format::from_name(f.name()), Some(f));
    }
    for m in TableMode::ALL {
        assert_eq!(TableMode::from_name(m.name()), Some(m));
    }
    assert_eq!(TableMode::from_name("block"), Some(TableMode::Code));
    assert_eq!(
        Format::from_name("telegram_html"),
        Some(Format::TelegramHtml)
    );
    assert_eq!(Format::from_name("nope"), None);
}

#[test]
fn empty_quotes_do_not_panic() {
    for md in [
        "> \n\n> ", ">", "> \n> \n", "-", "1.", "```", "|", "|-|", "#",
    ] {
        for f in Format::ALL {
            let _ = render(md, f, &opts());
        }
        let html = render(md, Format::TelegramHtml, &opts()).text;
        assert!(!html.is_empty(), "{md:?}");
        render_checks::read_telegram_html(&html).unwrap();
    }
}

#[test]
fn markup_with_nothing_visible_shows_as_written() {
    for md in ["[]()", "#", "> ", "![]()", "<>"] {
        for f in [Format::Whatsapp, Format::Plain] {
            assert_eq!(
                render(md, f, &opts()).text,
                md.trim(),
                "{md:?} in {}",
                f.name()
            );
        }
        let shown = render_checks::read_telegram_html(&html(md)).unwrap().text;
        assert_eq!(shown, md.trim(), "{md:?} on telegram");
        let slack = render(md, Format::SlackMrkdwn, &opts()).text;
        assert_eq!(
            slack.replace("&lt;", "<").replace("&gt;", ">"),
            md.trim(),
            "{md:?} on slack"
        );
    }
    // With CRLF line endings, shown with `\n` as every rendered text is (a `\r` in Telegram
    // HTML would show as a stray char).
    let md = "> \r\n```";
    let html = html(md);
    assert_eq!(html, "&gt; \n```");
    assert_eq!(
        render_checks::read_telegram_html(&html).unwrap().text,
        "> \n```"
    );
    assert_eq!(render(md, Format::Plain, &opts()).text, "> \n```");
}
