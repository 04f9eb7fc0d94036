/* The text core through the C ABI: replystream_split and replystream_chunk over a buffer.
 * Checks, with code written here: every piece fits the limit in the channel's unit, fences
 * are balanced in every piece, the pieces' source ranges with their separators give back
 * the text, views are NUL-terminated, and bad arguments get their codes. */
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

/* Checks the pieces against the text and `limit` (UTF-16 units); returns the count. */
static size_t check_pieces(const replystream_blocks *blocks, const char *text, size_t len,
                           size_t limit) {
    size_t n = replystream_blocks_count(blocks);
    CHECK(n >= 2);
    CHECK(replystream_blocks_get(blocks, n) == NULL);
    const replystream_block *first = replystream_blocks_get(blocks, 0);
    char *rebuilt = malloc(len + 1);
    CHECK(rebuilt != NULL);
    size_t at = 0, prev_end = 0;
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
        CHECK(at + piece + b->sep.len <= len);
        memcpy(rebuilt + at, text + b->source_start, piece);
        at += piece;
        memcpy(rebuilt + at, b->sep.ptr, b->sep.len);
        at += b->sep.len;
        /* The source text is in the displayed text, unless a fence line was added. */
        if (!b->fence_reopened && !b->fence_closed) {
            CHECK(b->text.len == piece && memcmp(b->text.ptr, text + b->source_start, piece) == 0);
        }
    }
    /* Trailing whitespace at the very end is not a piece. */
    size_t end = len;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' ')) {
        end--;
    }
    CHECK(at >= end && memcmp(rebuilt, text, end) == 0);
    free(rebuilt);
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
    printf("text: ok\n");
    return 0;
}
