/* Platform formats through the C ABI (SPEC §16): every format chosen by name on an options
 * handle, the engine's sends carrying the text to post, its format and the Markdown it came
 * from, replystream_render giving the same text, Telegram entities judged here by cutting
 * the text at their UTF-16 offsets, table modes, Discord's mass mentions, captions, the
 * block record's inline repair flags, and every refusal: unknown names, a format the channel
 * cannot show, NULL pointers, invalid UTF-8. */
#include "harness.h"

static const char MD[] =
    "# Title\n\n"
    "\xf0\x9f\x98\x80 **Bold** and _it_ [link](https://e.com/a?b=1&c=2) `x<y` & ~~gone~~ "
    "@everyone\n\n"
    "- one\n- two\n\n"
    "```py\nprint(1 < 2)\n```\n\n"
    "> quoted";

/* What each format posts for MD, in replystream_format order (reviewed by hand: Telegram's
 * allowed tags and escapes, Slack's <url|text> and escapes, Discord's neutralised
 * @everyone with a zero-width space, plain's "text (url)"). */
static const char *const WANT[7] = {
    /* markdown */
    MD,
    /* discord */
    "# Title\n\n"
    "\xf0\x9f\x98\x80 **Bold** and _it_ [link](https://e.com/a?b=1&c=2) `x<y` & ~~gone~~ "
    "@\xe2\x80\x8b" "everyone\n\n"
    "- one\n- two\n\n"
    "```py\nprint(1 < 2)\n```\n\n"
    "> quoted",
    /* telegram-html */
    "<b>Title</b>\n\n"
    "\xf0\x9f\x98\x80 <b>Bold</b> and <i>it</i> <a href=\"https://e.com/a?b=1&amp;c=2\">link</a> "
    "<code>x&lt;y</code> &amp; <s>gone</s> @everyone\n\n"
    "\xe2\x80\xa2 one\n\xe2\x80\xa2 two\n\n"
    "<pre><code class=\"language-py\">print(1 &lt; 2)</code></pre>\n\n"
    "<blockquote>quoted</blockquote>",
    /* telegram-entities */
    "Title\n\n"
    "\xf0\x9f\x98\x80 Bold and it link x<y & gone @everyone\n\n"
    "\xe2\x80\xa2 one\n\xe2\x80\xa2 two\n\n"
    "print(1 < 2)\n\n"
    "quoted",
    /* slack-mrkdwn */
    "*Title*\n\n"
    "\xf0\x9f\x98\x80 *Bold* and _it_ <https://e.com/a?b=1&amp;c=2|link> `x&lt;y` &amp; ~gone~ "
    "@everyone\n\n"
    "\xe2\x80\xa2 one\n\xe2\x80\xa2 two\n\n"
    "```print(1 &lt; 2)```\n\n"
    "> quoted",
    /* whatsapp */
    "*Title*\n\n"
    "\xf0\x9f\x98\x80 *Bold* and _it_ link (https://e.com/a?b=1&c=2) `x<y` & ~gone~ @everyone\n\n"
    "\xe2\x80\xa2 one\n\xe2\x80\xa2 two\n\n"
    "```print(1 < 2)```\n\n"
    "> quoted",
    /* plain */
    "Title\n\n"
    "\xf0\x9f\x98\x80 Bold and it link (https://e.com/a?b=1&c=2) x<y & gone @everyone\n\n"
    "\xe2\x80\xa2 one\n\xe2\x80\xa2 two\n\n"
    "print(1 < 2)\n\n"
    "> quoted",
};

static const char *const NAMES[7] = {"markdown",     "discord",  "telegram-html",
                                     "telegram-entities", "slack-mrkdwn", "whatsapp", "plain"};

static bool view_is(replystream_str s, const char *want) {
    return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

static void check_view_is(replystream_str s, const char *want) {
    check_view(s);
    if (!view_is(s, want)) {
        fprintf(stderr, "got  [%.*s]\nwant [%s]\n", (int)s.len, s.ptr, want);
        exit(1);
    }
}

static replystream_options *with_format(const char *name) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_format(opts, name, strlen(name)), REPLYSTREAM_OK);
    return opts;
}

/* The byte offset in UTF-8 `s` of UTF-16 unit `units` (which must fall on a scalar). */
static size_t byte_at_utf16(const char *s, size_t len, size_t units) {
    size_t at = 0, n = 0;
    while (n < units) {
        CHECK(at < len);
        unsigned char c = (unsigned char)s[at];
        size_t width = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        n += width == 4 ? 2 : 1;
        at += width;
    }
    CHECK(n == units);
    return at;
}

/* The entity covers exactly `want` in `text`, cut at its UTF-16 offset and length. */
static void check_entity(replystream_str text, const replystream_entity *e, unsigned kind,
                         const char *type, const char *want, const char *url, const char *lang) {
    CHECK(e != NULL);
    CHECK(e->kind == kind);
    check_view_is(e->type_name, type);
    size_t from = byte_at_utf16(text.ptr, text.len, e->offset);
    size_t to = byte_at_utf16(text.ptr, text.len, e->offset + e->length);
    replystream_str covered = {text.ptr + from, to - from};
    if (!view_is(covered, want)) {
        fprintf(stderr, "%s at %zu+%zu covers [%.*s], want [%s]\n", type, e->offset, e->length,
                (int)covered.len, covered.ptr, want);
        exit(1);
    }
    check_view_is(e->url, url);
    check_view_is(e->language, lang);
}

/* Every entity of MD's telegram-entities text, in order. */
static void check_md_entities(replystream_str text, const replystream_entity *e, size_t count) {
    CHECK(count == 8);
    check_entity(text, &e[0], REPLYSTREAM_ENTITY_BOLD, "bold", "Title", "", "");
    check_entity(text, &e[1], REPLYSTREAM_ENTITY_BOLD, "bold", "Bold", "", "");
    check_entity(text, &e[2], REPLYSTREAM_ENTITY_ITALIC, "italic", "it", "", "");
    check_entity(text, &e[3], REPLYSTREAM_ENTITY_TEXT_LINK, "text_link", "link",
                 "https://e.com/a?b=1&c=2", "");
    check_entity(text, &e[4], REPLYSTREAM_ENTITY_CODE, "code", "x<y", "", "");
    check_entity(text, &e[5], REPLYSTREAM_ENTITY_STRIKETHROUGH, "strikethrough", "gone", "", "");
    check_entity(text, &e[6], REPLYSTREAM_ENTITY_PRE, "pre", "print(1 < 2)", "", "py");
    check_entity(text, &e[7], REPLYSTREAM_ENTITY_BLOCKQUOTE, "blockquote", "quoted", "", "");
    /* The emoji before "Bold" is 2 UTF-16 units (4 bytes): "Title\n\n" + emoji + " ". */
    CHECK(e[1].offset == 10);
}

/* One engine turn per format on the generic channel (which takes any format): one send,
 * its text the format's, its Markdown the reply, and replystream_render agreeing. */
static void every_format_through_the_engine(void) {
    for (unsigned f = 0; f < 7; f++) {
        CHECK(strcmp(replystream_format_name(f), NAMES[f]) == 0);
        replystream_options *opts = with_format(NAMES[f]);
        replystream_engine *engine = new_engine("generic", opts);
        CHECK_CODE(replystream_engine_push_text_delta(engine, MD, sizeof MD - 1, 0),
                   REPLYSTREAM_OK);
        CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
        unsigned sends = 0;
        for (;;) {
            const replystream_action *a = NULL;
            replystream_result r = replystream_engine_poll_action(engine, &a);
            if (r == REPLYSTREAM_DONE) {
                break;
            }
            CHECK_CODE(r, REPLYSTREAM_OK);
            if (a->kind != REPLYSTREAM_ACTION_SEND) {
                continue;
            }
            drive_log log;
            memset(&log, 0, sizeof log);
            log_send(&log, engine, a);
            sends++;
            CHECK(a->format == (replystream_format)f);
            check_view_is(a->format_name, NAMES[f]);
            check_view_is(a->text, WANT[f]);
            check_view_is(a->markdown, MD);
            if (f == REPLYSTREAM_FORMAT_TELEGRAM_ENTITIES) {
                check_md_entities(a->text, a->entities, a->entity_count);
            } else {
                CHECK(a->entity_count == 0 && a->entities == NULL);
            }
            /* Pushes do not move the record's views. */
            CHECK_CODE(replystream_engine_push_delivered(engine, a->send_id, "m", 1, 1),
                       REPLYSTREAM_OK);
            check_view_is(a->text, WANT[f]);
        }
        CHECK(sends == 1);
        replystream_engine_free(engine);

        replystream_rendered *r = NULL;
        CHECK_CODE(replystream_render("generic", 7, opts, MD, sizeof MD - 1, &r), REPLYSTREAM_OK);
        check_view_is(replystream_rendered_text(r), WANT[f]);
        CHECK(replystream_rendered_format(r) == (replystream_format)f);
        size_t count = replystream_rendered_entity_count(r);
        CHECK(replystream_rendered_entity(r, count) == NULL);
        if (f == REPLYSTREAM_FORMAT_TELEGRAM_ENTITIES) {
            const replystream_entity *first = replystream_rendered_entity(r, 0);
            for (size_t i = 0; i < count; i++) {
                CHECK(replystream_rendered_entity(r, i) == first + i); /* contiguous */
            }
            check_md_entities(replystream_rendered_text(r), first, count);
        } else {
            CHECK(count == 0);
        }
        replystream_rendered_free(r);
        replystream_options_free(opts);
    }
    CHECK(replystream_format_name(7) == NULL);
}

/* The channel's own format when none is set: Telegram HTML on telegram, mrkdwn on slack. */
static void channel_defaults(void) {
    static const struct {
        const char *channel;
        unsigned format;
    } cases[] = {
        {"telegram", REPLYSTREAM_FORMAT_TELEGRAM_HTML}, {"discord", REPLYSTREAM_FORMAT_DISCORD},
        {"slack", REPLYSTREAM_FORMAT_SLACK_MRKDWN},     {"whatsapp", REPLYSTREAM_FORMAT_WHATSAPP},
        {"signal", REPLYSTREAM_FORMAT_PLAIN},           {"imessage", REPLYSTREAM_FORMAT_PLAIN},
        {"generic", REPLYSTREAM_FORMAT_MARKDOWN},       {"", REPLYSTREAM_FORMAT_MARKDOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        replystream_rendered *r = NULL;
        CHECK_CODE(replystream_render(cases[i].channel, strlen(cases[i].channel), NULL, MD,
                                      sizeof MD - 1, &r),
                   REPLYSTREAM_OK);
        CHECK(replystream_rendered_format(r) == cases[i].format);
        if (cases[i].format != REPLYSTREAM_FORMAT_DISCORD) {
            check_view_is(replystream_rendered_text(r), WANT[cases[i].format]);
        }
        replystream_rendered_free(r);
    }
    /* A NULL name goes back to the channel's own format. */
    replystream_options *opts = with_format("plain");
    CHECK_CODE(replystream_options_set_format(opts, NULL, 0), REPLYSTREAM_OK);
    replystream_rendered *r = NULL;
    CHECK_CODE(replystream_render("slack", 5, opts, MD, sizeof MD - 1, &r), REPLYSTREAM_OK);
    CHECK(replystream_rendered_format(r) == REPLYSTREAM_FORMAT_SLACK_MRKDWN);
    replystream_rendered_free(r);
    /* Names as the setter reads them: any case, '_' for '-'. */
    CHECK_CODE(replystream_options_set_format(opts, "Telegram_Entities", 17), REPLYSTREAM_OK);
    CHECK_CODE(replystream_render("telegram", 8, opts, "**b**", 5, &r), REPLYSTREAM_OK);
    CHECK(replystream_rendered_format(r) == REPLYSTREAM_FORMAT_TELEGRAM_ENTITIES);
    check_view_is(replystream_rendered_text(r), "b");
    CHECK(replystream_rendered_entity_count(r) == 1);
    replystream_rendered_free(r);
    replystream_options_free(opts);
}

static void render_with(const char *channel, const char *format, const char *table_mode,
                        const char *md, const char *want) {
    replystream_options *opts = format ? with_format(format) : new_options();
    if (table_mode != NULL) {
        CHECK_CODE(replystream_options_set_table_mode(opts, table_mode, strlen(table_mode)),
                   REPLYSTREAM_OK);
    }
    replystream_rendered *r = NULL;
    CHECK_CODE(replystream_render(channel, strlen(channel), opts, md, strlen(md), &r),
               REPLYSTREAM_OK);
    check_view_is(replystream_rendered_text(r), want);
    replystream_rendered_free(r);
    replystream_options_free(opts);
}

/* Table modes and Discord's mass mentions. */
static void table_modes_and_mentions(void) {
    const char *table = "| a | bb |\n|---|---|\n| 1 | 2 |\n| 33 | 4 |";
    render_with("telegram", NULL, NULL, table,
                "<pre>a  | bb\n---|---\n1  | 2\n33 | 4</pre>");
    render_with("telegram", NULL, "code", table,
                "<pre>a  | bb\n---|---\n1  | 2\n33 | 4</pre>");
    render_with("telegram", NULL, "BLOCK", table,
                "<pre>a  | bb\n---|---\n1  | 2\n33 | 4</pre>");
    render_with("slack", NULL, "bullets", table, "\xe2\x80\xa2 a: 1; bb: 2\n\xe2\x80\xa2 a: 33; bb: 4");
    render_with("whatsapp", NULL, "off", table, "| a | bb |\n|---|---|\n| 1 | 2 |\n| 33 | 4 |");
    render_with("generic", NULL, NULL, table, table);
    render_with("discord", NULL, NULL, "hi @everyone and @here",
                "hi @\xe2\x80\x8b" "everyone and @\xe2\x80\x8bhere");
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_allow_mass_mentions(opts, true), REPLYSTREAM_OK);
    replystream_rendered *r = NULL;
    CHECK_CODE(replystream_render("discord", 7, opts, "hi @everyone", 12, &r), REPLYSTREAM_OK);
    check_view_is(replystream_rendered_text(r), "hi @everyone");
    replystream_rendered_free(r);
    replystream_options_free(opts);
    /* Markdown that is not well-formed renders as the text it is, escaped. */
    render_with("telegram", NULL, NULL, "**open <b>tag</b> & a | b",
                "**open &lt;b&gt;tag&lt;/b&gt; &amp; a | b");
}

/* Reasoning in Telegram HTML goes in an expandable quote. */
static void reasoning_is_quoted(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_reasoning(opts, REPLYSTREAM_REASONING_ON), REPLYSTREAM_OK);
    replystream_engine *engine = new_engine("telegram", opts);
    replystream_options_free(opts);
    CHECK_CODE(replystream_engine_push_thinking_delta(engine, "Plan **it** <now>", 17, 0),
               REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Done.", 5, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    bool quoted = false;
    for (int step = 0; step < 100 && !replystream_engine_is_done(engine); step++) {
        const replystream_action *a = NULL;
        while (replystream_engine_poll_action(engine, &a) == REPLYSTREAM_OK) {
            if (a->kind != REPLYSTREAM_ACTION_SEND) {
                continue;
            }
            if (a->lane == REPLYSTREAM_LANE_REASONING) {
                check_view_is(a->text, "<blockquote expandable>Reasoning:\n<i>Plan <b>it</b> "
                                       "&lt;now&gt;</i></blockquote>");
                check_view_is(a->markdown, "Reasoning:\n_Plan **it** <now>_");
                quoted = true;
            } else {
                check_view_is(a->text, "Done.");
            }
            CHECK_CODE(replystream_engine_push_delivered(engine, a->send_id, NULL, 0, 0),
                       REPLYSTREAM_OK);
        }
        uint64_t now = 0;
        fire_next_deadline(engine, &now);
    }
    CHECK(quoted);
    replystream_engine_free(engine);
}

/* A caption over the caption limit goes first, as its own message; under it, it stays. */
static void captions(void) {
    static const char reply[] =
        "This caption is longer than forty characters, by a lot.\n"
        "MEDIA: https://example.com/chart.png";
    for (int limited = 0; limited < 2; limited++) {
        replystream_options *opts = new_options();
        CHECK_CODE(replystream_options_set_caption_limit(opts, limited ? 40 : 0), REPLYSTREAM_OK);
        replystream_engine *engine = new_engine("generic", opts);
        replystream_options_free(opts);
        CHECK_CODE(replystream_engine_push_text_delta(engine, reply, sizeof reply - 1, 0),
                   REPLYSTREAM_OK);
        CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
        unsigned sends = 0;
        for (int step = 0; step < 100 && !replystream_engine_is_done(engine); step++) {
            const replystream_action *a = NULL;
            while (replystream_engine_poll_action(engine, &a) == REPLYSTREAM_OK) {
                if (a->kind != REPLYSTREAM_ACTION_SEND) {
                    continue;
                }
                const char *caption = "This caption is longer than forty characters, by a lot.";
                if (limited && sends == 0) {
                    check_view_is(a->text, caption);
                    CHECK(a->media_count == 0);
                } else if (limited) {
                    check_view_is(a->text, "");
                    CHECK(a->media_count == 1);
                } else {
                    check_view_is(a->text, caption);
                    CHECK(a->media_count == 1);
                }
                sends++;
                CHECK_CODE(replystream_engine_push_delivered(engine, a->send_id, NULL, 0, 0),
                           REPLYSTREAM_OK);
            }
            uint64_t now = 0;
            fire_next_deadline(engine, &now);
        }
        CHECK(sends == (limited ? 2u : 1u));
        replystream_engine_free(engine);
    }
}

/* The block record's inline repair flags: a bold span longer than a piece is closed at the
 * end of one piece and reopened at the start of the next. */
static void spans_closed_and_reopened(void) {
    char text[400];
    int n = snprintf(text, sizeof text, "**%s**",
                     "one two three four five six seven eight nine ten eleven twelve thirteen "
                     "fourteen fifteen sixteen seventeen eighteen nineteen twenty");
    CHECK(n > 0);
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_metric(opts, REPLYSTREAM_METRIC_CHARS), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_text_limit(opts, 60), REPLYSTREAM_OK);
    replystream_blocks *blocks = NULL;
    CHECK_CODE(replystream_split("generic", 7, opts, text, (size_t)n, &blocks), REPLYSTREAM_OK);
    size_t count = replystream_blocks_count(blocks);
    CHECK(count >= 2);
    for (size_t i = 0; i < count; i++) {
        const replystream_block *b = replystream_blocks_get(blocks, i);
        /* Every piece but the last closes the bold; every piece but the first reopens it. */
        CHECK(b->spans_closed == (i + 1 < count));
        CHECK(b->spans_reopened == (i > 0));
        CHECK(b->text.len >= 4);
        CHECK(memcmp(b->text.ptr, "**", 2) == 0);
        CHECK(memcmp(b->text.ptr + b->text.len - 2, "**", 2) == 0);
        CHECK(!b->spans_reopened || b->source_in_text_start == 2);
    }
    replystream_blocks_free(blocks);
    replystream_options_free(opts);
}

/* Every refusal, with its code and the field named. */
static void refusals(void) {
    replystream_options *opts = new_options();
    replystream_str detail;
    /* Unknown names. */
    CHECK_CODE(replystream_options_set_format(opts, "markdownv2", 10), REPLYSTREAM_INVALID_CONFIG);
    CHECK_CODE(replystream_options_last_error(opts, &detail), REPLYSTREAM_OK);
    CHECK(strstr(detail.ptr, "format") != NULL && strstr(detail.ptr, "markdownv2") != NULL);
    CHECK(strstr(detail.ptr, "telegram-entities") != NULL); /* the known names listed */
    CHECK_CODE(replystream_options_set_table_mode(opts, "grid", 4), REPLYSTREAM_INVALID_CONFIG);
    CHECK_CODE(replystream_options_last_error(opts, &detail), REPLYSTREAM_OK);
    CHECK(strstr(detail.ptr, "table_mode") != NULL);
    CHECK_CODE(replystream_options_set_format(opts, "", 0), REPLYSTREAM_INVALID_CONFIG);
    /* A refused name changed nothing: the options still build a generic engine. */
    replystream_engine *engine = new_engine("generic", opts);
    replystream_engine_free(engine);

    /* A format the channel cannot show, refused on use by every constructor. */
    CHECK_CODE(replystream_options_set_format(opts, "slack-mrkdwn", 12), REPLYSTREAM_OK);
    engine = (replystream_engine *)&detail; /* overwritten with NULL on error */
    CHECK_CODE(replystream_engine_new("telegram", 8, opts, 1, &engine), REPLYSTREAM_INVALID_CONFIG);
    CHECK(engine == NULL);
    check_new_error("format");
    check_new_error("telegram");
    replystream_rendered *r = (replystream_rendered *)&detail;
    CHECK_CODE(replystream_render("telegram", 8, opts, "x", 1, &r), REPLYSTREAM_INVALID_CONFIG);
    CHECK(r == NULL);
    check_new_error("format");
    replystream_blocks *blocks = NULL;
    CHECK_CODE(replystream_split("telegram", 8, opts, "x", 1, &blocks), REPLYSTREAM_INVALID_CONFIG);
    CHECK(blocks == NULL);
    /* Table mode native needs a format with tables. */
    CHECK_CODE(replystream_options_set_format(opts, NULL, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_table_mode(opts, "native", 6), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_new("telegram", 8, opts, 1, &engine), REPLYSTREAM_INVALID_CONFIG);
    check_new_error("table_mode");
    CHECK_CODE(replystream_render("generic", 7, opts, "x", 1, &r), REPLYSTREAM_OK);
    replystream_rendered_free(r);

    /* NULL pointers. */
    CHECK_CODE(replystream_options_set_format(NULL, "plain", 5), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_options_set_format(opts, NULL, 5), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_options_set_table_mode(NULL, "code", 4), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_options_set_table_mode(opts, NULL, 4), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_options_set_allow_mass_mentions(NULL, true), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_options_set_caption_limit(NULL, 10), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_render("generic", 7, NULL, "x", 1, NULL), REPLYSTREAM_NULL_POINTER);
    check_new_error("out");
    CHECK_CODE(replystream_render("generic", 7, NULL, NULL, 3, &r), REPLYSTREAM_NULL_POINTER);
    CHECK(r == NULL);
    CHECK_CODE(replystream_render(NULL, 3, NULL, "x", 1, &r), REPLYSTREAM_NULL_POINTER);
    /* NULL with length 0 is the empty text, on the generic channel. */
    CHECK_CODE(replystream_render(NULL, 0, NULL, NULL, 0, &r), REPLYSTREAM_OK);
    check_view_is(replystream_rendered_text(r), "");
    CHECK(replystream_rendered_entity_count(r) == 0);
    CHECK(replystream_rendered_entity(r, 0) == NULL);
    replystream_rendered_free(r);
    check_view_is(replystream_rendered_text(NULL), "");
    CHECK(replystream_rendered_format(NULL) == REPLYSTREAM_FORMAT_MARKDOWN);
    CHECK(replystream_rendered_entity_count(NULL) == 0);
    CHECK(replystream_rendered_entity(NULL, 0) == NULL);
    replystream_rendered_free(NULL);

    /* Invalid UTF-8: in a name, in the text (a lone continuation byte, a cut sequence). */
    CHECK_CODE(replystream_options_set_format(opts, "pl\xff", 3), REPLYSTREAM_INVALID_UTF8);
    CHECK_CODE(replystream_options_last_error(opts, &detail), REPLYSTREAM_OK);
    CHECK(strstr(detail.ptr, "format") != NULL);
    CHECK_CODE(replystream_options_set_table_mode(opts, "\xc3", 1), REPLYSTREAM_INVALID_UTF8);
    CHECK_CODE(replystream_render("telegram", 8, NULL, "ok \x80", 4, &r), REPLYSTREAM_INVALID_UTF8);
    CHECK(r == NULL);
    check_new_error("text");
    CHECK_CODE(replystream_render("telegram", 8, NULL, "caf\xc3", 4, &r), REPLYSTREAM_INVALID_UTF8);
    CHECK_CODE(replystream_render("nowhere", 7, NULL, "x", 1, &r), REPLYSTREAM_UNKNOWN_CHANNEL);
    replystream_options_free(opts);
}

int main(void) {
    every_format_through_the_engine();
    channel_defaults();
    table_modes_and_mentions();
    reasoning_is_quoted();
    captions();
    spans_closed_and_reopened();
    refusals();
    printf("formats: ok\n");
    return 0;
}
