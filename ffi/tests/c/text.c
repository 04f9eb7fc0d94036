/* The text core through the C ABI: replystream_split and replystream_chunk over a buffer.
 * Checks, with code written here: every piece fits the limit in the channel's unit, fences
 * are balanced in every piece, the pieces alone (lead, the source part of the text, sep)
 * give back the text byte for byte (CR LF, indented code, a long info string under the
 * smallest limit), views are NUL-terminated, and bad arguments and limits too small get
 * their codes. */
#include "harness.h"

/* UTF-16 code units of UTF-8 text: one per scalar, two for a 4-byte sequence. */
static size_t utf16_len(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80) {
            n += c >= 0xF0 ? 2 : 1;
        }
    }
    return n;
}

/* Lines that open or close a ``` fence (at most 3 spaces of indent). */
static unsigned fence_lines(const char *s, size_t len) {
    unsigned n = 0;
    size_t at = 0;
    while (at < len) {
        size_t indent = 0;
        while (at + indent < len && s[at + indent] == ' ' && indent < 4) {
            indent++;
        }
        if (indent <= 3 && at + indent + 3 <= len && memcmp(s + at + indent, "```", 3) == 0) {
            n++;
        }
        const char *nl = memchr(s + at, '\n', len - at);
        if (nl == NULL) {
            break;
        }
        at = (size_t)(nl - s) + 1;
    }
    return n;
}

/* Builds a long Markdown document with prose, CJK, emoji and fenced code. */
static char *document(size_t *len_out) {
    static const char para[] =
        "Rivers carry sediment downstream; where the current slows it settles. "
        "\xe6\xb2\xb3\xe6\xb5\x81\xe6\x90\xac\xe8\xbf\x90\xe6\xb3\xa5\xe6\xb2\x99\xe3\x80\x82 "
        "\xf0\x9f\x8c\x8a\xf0\x9f\x8f\x9e\xef\xb8\x8f and so a delta grows.\n\n"
        "```python\ndef delta(flow, load):\n    return load / max(flow, 1)\n\n"
        "print(delta(3, 12))\n```\n\n";
    size_t n = 12, len = (sizeof para - 1) * n;
    char *doc = malloc(len + 1);
    CHECK(doc != NULL);
    for (size_t i = 0; i < n; i++) {
        memcpy(doc + i * (sizeof para - 1), para, sizeof para - 1);
    }
    doc[len] = '\0';
    *len_out = len;
    return doc;
}

/* Unicode scalars of UTF-8 text. */
static size_t chars_len(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    }
    return n;
}

/* Checks the pieces against the text and `limit` (UTF-16 units); returns the count. */
static size_t check_pieces(const replystream_blocks *blocks, const char *text, size_t len,
                           size_t limit) {
    size_t n = replystream_blocks_count(blocks);
    CHECK(n >= 2);
    CHECK(replystream_blocks_get(blocks, n) == NULL);
    const replystream_block *first = replystream_blocks_get(blocks, 0);
    size_t prev_end = 0;
    for (size_t i = 0; i < n; i++) {
        const replystream_block *b = replystream_blocks_get(blocks, i);
        CHECK(b == first + i); /* contiguous */
        check_view(b->text);
        check_view(b->sep);
        CHECK(b->text.len > 0);
        CHECK(utf16_len(b->text.ptr, b->text.len) <= limit);
        CHECK(fence_lines(b->text.ptr, b->text.len) % 2 == 0);
        CHECK(b->source_start >= prev_end && b->source_start <= b->source_end);
        CHECK(b->source_end <= len);
        prev_end = b->source_end;
        size_t piece = b->source_end - b->source_start;
        /* The source text is the displayed text, unless synthetic text was added. */
        if (!b->fence_reopened && !b->fence_closed && !b->indent_reopened) {
            CHECK(b->text.len == piece && memcmp(b->text.ptr, text + b->source_start, piece) == 0);
        }
    }
    rebuilds_exactly(blocks, text, len);
    return n;
}

static void split_for_telegram(void) {
    size_t len;
    char *doc = document(&len);
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_text_limit(opts, 120), REPLYSTREAM_OK);
    replystream_blocks *blocks = NULL;
    CHECK_CODE(replystream_split("telegram", 8, opts, doc, len, &blocks), REPLYSTREAM_OK);
    size_t n = check_pieces(blocks, doc, len, 120);
    replystream_blocks_free(blocks);
    /* The channel's own limit (4096 UTF-16 units): one piece for this document. */
    CHECK_CODE(replystream_split("telegram", 8, NULL, doc, len, &blocks), REPLYSTREAM_OK);
    CHECK(replystream_blocks_count(blocks) == 1);
    replystream_blocks_free(blocks);
    CHECK(n >= 12);
    replystream_options_free(opts);
    /* Newline mode splits at every paragraph outside code (a blank line inside the fence
     * is not one): 12 times prose + code. */
    opts = new_options();
    CHECK_CODE(replystream_options_set_chunk_mode(opts, REPLYSTREAM_CHUNK_NEWLINE), REPLYSTREAM_OK);
    CHECK_CODE(replystream_split("telegram", 8, opts, doc, len, &blocks), REPLYSTREAM_OK);
    CHECK(check_pieces(blocks, doc, len, 4096) == 24);
    replystream_blocks_free(blocks);
    replystream_options_free(opts);
    free(doc);
}

static void chunk_as_a_stream(void) {
    size_t len;
    char *doc = document(&len);
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_chunk_min(opts, 60), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_max(opts, 100), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_metric(opts, REPLYSTREAM_METRIC_UTF16), REPLYSTREAM_OK);
    replystream_blocks *blocks = NULL;
    CHECK_CODE(replystream_chunk(NULL, 0, opts, doc, len, &blocks), REPLYSTREAM_OK);
    check_pieces(blocks, doc, len, 100);
    replystream_blocks_free(blocks);
    replystream_options_free(opts);
    free(doc);
}

/* Options with `metric` and a text limit (and chunk bounds) of `limit`. */
static replystream_options *limited(uint32_t metric, size_t limit) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_metric(opts, metric), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_text_limit(opts, limit), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_min(opts, limit / 2), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_max(opts, limit), REPLYSTREAM_OK);
    return opts;
}

/* Splits and chunks `text` under the smallest chars limit and a roomier one: every piece
 * within the limit, fences balanced, the text rebuilt exactly. Returns how many pieces
 * had a synthetic start or end (over both operations, at the smallest limit). */
static unsigned cut_exactly(const char *text) {
    size_t len = strlen(text);
    unsigned synthetic = 0;
    const size_t smallest = replystream_min_limit(REPLYSTREAM_METRIC_CHARS);
    const size_t limits[] = {smallest, 60};
    for (size_t l = 0; l < 2; l++) {
        replystream_options *opts = limited(REPLYSTREAM_METRIC_CHARS, limits[l]);
        for (int op = 0; op < 2; op++) {
            replystream_blocks *blocks = NULL;
            CHECK_CODE(op == 0 ? replystream_split("discord", 7, opts, text, len, &blocks)
                               : replystream_chunk("discord", 7, opts, text, len, &blocks),
                       REPLYSTREAM_OK);
            size_t n = replystream_blocks_count(blocks);
            CHECK(n >= 1);
            for (size_t i = 0; i < n; i++) {
                const replystream_block *b = replystream_blocks_get(blocks, i);
                CHECK(chars_len(b->text.ptr, b->text.len) <= limits[l]);
                CHECK(fence_lines(b->text.ptr, b->text.len) % 2 == 0);
                if (l == 0) {
                    synthetic += b->fence_reopened + b->fence_closed + b->indent_reopened;
                }
            }
            rebuilds_exactly(blocks, text, len);
            replystream_blocks_free(blocks);
        }
        replystream_options_free(opts);
    }
    return synthetic;
}

static void pieces_rebuild_the_text(void) {
    /* CR LF line ends, paragraphs and a fence, with leading blank lines and trailing
     * whitespace. */
    CHECK(cut_exactly("\r\n\r\n  Rivers carry sediment downstream.\r\nWhere the current slows "
                      "it settles, and over centuries a delta grows.\r\n\r\n```\r\nlet a = 1;\r\n"
                      "let b = 2;\r\nlet c = a + b;\r\n```\r\n\r\nThat is all.\r\n \r\n") > 0);
    /* Indented code with lines longer than the limit: continued after 4 synthetic spaces. */
    unsigned indented = 0;
    {
        const char *text = "Run this:\n\n    for river in rivers: print(river.name, river.length, "
                           "river.mouth, river.delta_area)\n    done()\n\nThen stop.\n";
        CHECK(cut_exactly(text) > 0);
        replystream_options *opts = limited(REPLYSTREAM_METRIC_CHARS, 24);
        replystream_blocks *blocks = NULL;
        CHECK_CODE(replystream_split(NULL, 0, opts, text, strlen(text), &blocks), REPLYSTREAM_OK);
        for (size_t i = 0; i < replystream_blocks_count(blocks); i++) {
            indented += replystream_blocks_get(blocks, i)->indent_reopened;
        }
        replystream_blocks_free(blocks);
        replystream_options_free(opts);
    }
    CHECK(indented > 0);
    /* A fence whose info string is longer than the whole limit. */
    CHECK(cut_exactly("Intro.\n\n```python title=\"a very long info string for the fence\" "
                      "linenums=1\nprint('one')\nprint('two')\nprint('three')\nprint('four')\n"
                      "```\n\nOutro after the code.") > 0);
    /* Tildes, a longer marker, CJK and an emoji sequence inside the code. */
    CHECK(cut_exactly("~~~~ text\n\xe6\xb2\xb3\xe6\xb5\x81 \xf0\x9f\x91\xa9\xf0\x9f\x8f\xbb\xe2\x80"
                      "\x8d\xe2\x9d\xa4\xef\xb8\x8f\xe2\x80\x8d\xf0\x9f\x92\x8b\xe2\x80\x8d"
                      "\xf0\x9f\x91\xa8\xf0\x9f\x8f\xbc one two three four five six seven\n"
                      "~~~~\n") > 0);
}

/* Limits below replystream_min_limit are refused with INVALID_CONFIG naming the field, by
 * split, chunk and engine_new; the smallest limit itself works. */
static void limits_too_small_are_refused(void) {
    const uint32_t metrics[] = {REPLYSTREAM_METRIC_UTF16, REPLYSTREAM_METRIC_CHARS,
                                REPLYSTREAM_METRIC_BYTES, REPLYSTREAM_METRIC_GRAPHEMES};
    const size_t expect[] = {29, 24, 49, 15};
    const char text[] = "```\ncode\n```";
    for (size_t m = 0; m < 4; m++) {
        size_t smallest = replystream_min_limit(metrics[m]);
        CHECK(smallest == expect[m]);
        replystream_blocks *blocks = (replystream_blocks *)&blocks;
        replystream_options *opts = new_options();
        CHECK_CODE(replystream_options_set_metric(opts, metrics[m]), REPLYSTREAM_OK);
        CHECK_CODE(replystream_options_set_text_limit(opts, smallest - 1), REPLYSTREAM_OK);
        CHECK_CODE(replystream_split(NULL, 0, opts, text, sizeof text - 1, &blocks),
                   REPLYSTREAM_INVALID_CONFIG);
        CHECK(blocks == NULL);
        check_new_error("text_limit");
        CHECK_CODE(replystream_chunk(NULL, 0, opts, text, sizeof text - 1, &blocks),
                   REPLYSTREAM_INVALID_CONFIG);
        check_new_error("text_limit");
        replystream_engine *engine = (replystream_engine *)&engine;
        CHECK_CODE(replystream_engine_new(NULL, 0, opts, 0, &engine), REPLYSTREAM_INVALID_CONFIG);
        CHECK(engine == NULL);
        check_new_error("text_limit");
        /* chunk_max below the smallest, with a roomy text limit. */
        CHECK_CODE(replystream_options_set_text_limit(opts, 1000), REPLYSTREAM_OK);
        CHECK_CODE(replystream_options_set_chunk_min(opts, 1), REPLYSTREAM_OK);
        CHECK_CODE(replystream_options_set_chunk_max(opts, smallest - 1), REPLYSTREAM_OK);
        CHECK_CODE(replystream_chunk(NULL, 0, opts, text, sizeof text - 1, &blocks),
                   REPLYSTREAM_INVALID_CONFIG);
        check_new_error("chunk_max");
        /* The smallest limit works. */
        CHECK_CODE(replystream_options_set_text_limit(opts, smallest), REPLYSTREAM_OK);
        CHECK_CODE(replystream_options_set_chunk_max(opts, smallest), REPLYSTREAM_OK);
        CHECK_CODE(replystream_split(NULL, 0, opts, text, sizeof text - 1, &blocks), REPLYSTREAM_OK);
        rebuilds_exactly(blocks, text, sizeof text - 1);
        replystream_blocks_free(blocks);
        CHECK_CODE(replystream_chunk(NULL, 0, opts, text, sizeof text - 1, &blocks), REPLYSTREAM_OK);
        rebuilds_exactly(blocks, text, sizeof text - 1);
        replystream_blocks_free(blocks);
        replystream_options_free(opts);
    }
    /* Not a metric: 0. */
    CHECK(replystream_min_limit(4) == 0);
    CHECK(replystream_min_limit(UINT32_MAX) == 0);
}

static void small_and_bad_inputs(void) {
    replystream_blocks *blocks = NULL;
    /* The empty text has no pieces; NULL with 0 is the empty text. */
    CHECK_CODE(replystream_split(NULL, 0, NULL, NULL, 0, &blocks), REPLYSTREAM_OK);
    CHECK(replystream_blocks_count(blocks) == 0);
    CHECK(replystream_blocks_get(blocks, 0) == NULL);
    replystream_blocks_free(blocks);
    CHECK_CODE(replystream_chunk(NULL, 0, NULL, "Short.", 6, &blocks), REPLYSTREAM_OK);
    CHECK(replystream_blocks_count(blocks) == 1);
    const replystream_block *b = replystream_blocks_get(blocks, 0);
    CHECK(b->source_start == 0 && b->source_end == 6 && strcmp(b->text.ptr, "Short.") == 0);
    replystream_blocks_free(blocks);
    blocks = (replystream_blocks *)&b; /* must be overwritten with NULL */
    CHECK_CODE(replystream_split(NULL, 0, NULL, "\xc3(", 2, &blocks), REPLYSTREAM_INVALID_UTF8);
    CHECK(blocks == NULL);
    CHECK_CODE(replystream_chunk("nowhere", 7, NULL, "x", 1, &blocks), REPLYSTREAM_UNKNOWN_CHANNEL);
    CHECK_CODE(replystream_chunk(NULL, 0, NULL, "x", (size_t)PTRDIFF_MAX + 1, &blocks),
               REPLYSTREAM_INVALID_ARGUMENT);
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_text_limit(opts, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_chunk(NULL, 0, opts, "x", 1, &blocks), REPLYSTREAM_INVALID_CONFIG);
    check_new_error("text_limit");
    replystream_options_free(opts);
}

int main(void) {
    split_for_telegram();
    chunk_as_a_stream();
    small_and_bad_inputs();
    pieces_rebuild_the_text();
    limits_too_small_are_refused();
    printf("text: ok\n");
    return 0;
}
