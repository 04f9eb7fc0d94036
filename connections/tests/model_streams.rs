//! Server-sent events and the model-stream adapters: exact inputs for recorded-shape
//! replies of each protocol, the same for every split of the bytes, errors (never panics)
//! for malformed events and broken streams, and real streamed HTTP on loopback.
#![allow(clippy::disallowed_methods)] // real servers, real time

mod fake;

use replystream::OwnedInput;
use replystream_connections::model::{Decoder, ModelError, ModelRequest, Protocol, stream_reply};
use replystream_connections::sse::{SseError, SseEvent, SseParser};

fn ev(event: &str, data: &str, id: Option<&str>) -> SseEvent {
    SseEvent {
        event: event.to_owned(),
        data: data.to_owned(),
        id: id.map(str::to_owned),
    }
}

fn parse_in_pieces(bytes: &[u8], cuts: &[usize]) -> Result<Vec<SseEvent>, SseError> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    let mut at = 0;
    for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        parser.feed(&bytes[at..cut], &mut out)?;
        at = cut;
    }
    parser.finish()?;
    Ok(out)
}

#[test]
fn sse_events_are_the_same_for_every_split_of_the_bytes() {
    let stream = "\u{feff}: a comment\r\n\
        event: greeting\r\n\
        data: héllo 👩‍👩‍👧\r\n\
        data:second line, no space\r\n\
        id: 7\r\n\
        \r\n\
        data: cr only\r\r\
        data:  two spaces keep one\n\
        retry: 100\n\
        unknown: field\n\
        data\n\
        \n\
        event: empty-data-is-no-event\n\
        \n\
        data: 漢字\n\n";
    let expected = vec![
        ev("greeting", "héllo 👩‍👩‍👧\nsecond line, no space", Some("7")),
        ev("message", "cr only", Some("7")),
        ev("message", " two spaces keep one\n", Some("7")),
        ev("message", "漢字", Some("7")),
    ];
    let bytes = stream.as_bytes();
    assert_eq!(parse_in_pieces(bytes, &[]).unwrap(), expected);
    for i in 0..=bytes.len() {
        assert_eq!(
            parse_in_pieces(bytes, &[i]).unwrap(),
            expected,
            "split at {i}"
        );
    }
    let every: Vec<usize> = (1..bytes.len()).collect();
    assert_eq!(
        parse_in_pieces(bytes, &every).unwrap(),
        expected,
        "byte by byte"
    );
}

#[test]
fn sse_errors_for_bad_bytes_and_broken_streams() {
    let bad = b"data: ok\n\ndata: \xff\xfe\n\n";
    for i in 0..=bad.len() {
        let e = parse_in_pieces(bad, &[i]).unwrap_err();
        assert_eq!(e, SseError::NotUtf8 { offset: 10 }, "split at {i}");
    }
    let cut = b"data: one\n\ndata: two";
    for i in 0..=cut.len() {
        assert_eq!(
            parse_in_pieces(cut, &[i]),
            Err(SseError::Truncated),
            "split at {i}"
        );
    }
    let cut_after_field = b"data: one\n\nevent: x\n";
    assert_eq!(
        parse_in_pieces(cut_after_field, &[]),
        Err(SseError::Truncated)
    );
    // A trailing comment is not an event.
    assert_eq!(
        parse_in_pieces(b"data: a\n\n: bye", &[]).unwrap(),
        [ev("message", "a", None)]
    );
}

fn decode_in_pieces(
    protocol: Protocol,
    bytes: &[u8],
    cut: usize,
) -> Result<Vec<OwnedInput>, ModelError> {
    let mut decoder = Decoder::new(protocol);
    let mut out = Vec::new();
    decoder.feed(&bytes[..cut], &mut out)?;
    decoder.feed(&bytes[cut..], &mut out)?;
    decoder.finish()?;
    Ok(out)
}

/// Decodes whole, then at every split, and checks each gives `expected`.
fn check_every_split(protocol: Protocol, stream: &str, expected: &[OwnedInput]) {
    let bytes = stream.as_bytes();
    for cut in 0..=bytes.len() {
        assert_eq!(
            decode_in_pieces(protocol, bytes, cut).unwrap(),
            expected,
            "split at {cut}"
        );
    }
}

fn text(t: &str) -> OwnedInput {
    OwnedInput::TextDelta(t.to_owned())
}

fn thinking(t: &str) -> OwnedInput {
    OwnedInput::ThinkingDelta(t.to_owned())
}

fn tool(name: &str) -> OwnedInput {
    OwnedInput::ToolStart {
        name: name.to_owned(),
    }
}

const OPENAI_CHAT: &str = r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"reasoning_content":"Let me think… "},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"reasoning_content":"done."},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Héllo 👩‍👩‍👧 "},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"content":"漢字\r\nnext"},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]},"finish_reason":"tool_calls"}]}

data: {"id":"c1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9}}

data: [DONE]

"#;

#[test]
fn openai_chat_completions_stream() {
    let expected = [
        OwnedInput::MessageStart,
        thinking("Let me think… "),
        thinking("done."),
        OwnedInput::ThinkingEnd,
        text("Héllo 👩‍👩‍👧 "),
        text("漢字\r\nnext"),
        tool("get_weather"),
        OwnedInput::MessageEnd(None),
    ];
    check_every_split(Protocol::OpenAiChat, OPENAI_CHAT, &expected);
}

const RESPONSES: &str = r#"event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}

event: response.in_progress
data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1"}}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Weighing it."}

event: response.reasoning_summary_text.done
data: {"type":"response.reasoning_summary_text.done","item_id":"rs_1","output_index":0,"summary_index":0,"text":"Weighing it."}

event: response.output_item.added
data: {"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"Bonjour à "}

event: response.output_text.delta
data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"tous 🇫🇷"}

event: response.output_text.done
data: {"type":"response.output_text.done","item_id":"msg_1","output_index":1,"content_index":0,"text":"Bonjour à tous 🇫🇷"}

event: response.output_item.added
data: {"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"search","arguments":""}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":2,"delta":"{}"}

event: response.completed
data: {"type":"response.completed","response":{"id":"resp_1","status":"completed"}}

"#;

#[test]
fn openai_responses_stream() {
    let expected = [
        OwnedInput::MessageStart,
        thinking("Weighing it."),
        OwnedInput::ThinkingEnd,
        text("Bonjour à "),
        text("tous 🇫🇷"),
        OwnedInput::TextEnd(Some("Bonjour à tous 🇫🇷".to_owned())),
        tool("search"),
        OwnedInput::MessageEnd(None),
    ];
    check_every_split(Protocol::OpenAiResponses, RESPONSES, &expected);
}

const ANTHROPIC: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm, ünïcode."}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCg"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: ping
data: {"type": "ping"}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Here you go: "}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"`code` ✓"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_time","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"tz\": \"UTC\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}

event: message_stop
data: {"type":"message_stop"}

"#;

#[test]
fn anthropic_messages_stream() {
    let expected = [
        OwnedInput::MessageStart,
        thinking("Hmm, ünïcode."),
        OwnedInput::ThinkingEnd,
        text("Here you go: "),
        text("`code` ✓"),
        OwnedInput::TextEnd(None),
        tool("get_time"),
        OwnedInput::MessageEnd(None),
    ];
    check_every_split(Protocol::Anthropic, ANTHROPIC, &expected);
}

#[test]
fn provider_errors_in_the_stream_become_a_fail_input() {
    let chat = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
                data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\"}}\n\n";
    assert_eq!(
        decode_in_pieces(Protocol::OpenAiChat, chat.as_bytes(), 0).unwrap(),
        [
            OwnedInput::MessageStart,
            text("Hi"),
            OwnedInput::Fail {
                error: "Rate limit reached".into()
            }
        ]
    );
    let anthropic = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    assert_eq!(
        decode_in_pieces(Protocol::Anthropic, anthropic.as_bytes(), 0).unwrap(),
        [OwnedInput::Fail {
            error: "Overloaded".into()
        }]
    );
    let failed = "data: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n";
    assert_eq!(
        decode_in_pieces(Protocol::OpenAiResponses, failed.as_bytes(), 0).unwrap(),
        [
            OwnedInput::MessageStart,
            OwnedInput::Fail {
                error: "boom".into()
            }
        ]
    );
}

#[test]
fn malformed_events_are_errors_and_broken_streams_are_incomplete() {
    let cases: &[(Protocol, &str, &str)] = &[
        (Protocol::OpenAiChat, "data: {not json\n\n", "not JSON"),
        (
            Protocol::OpenAiChat,
            "data: {\"choices\":{}}\n\n",
            "choices is not a list",
        ),
        (
            Protocol::OpenAiChat,
            "data: {\"choices\":[{\"delta\":{\"content\":5}}]}\n\n",
            "/delta/content is not a string",
        ),
        (
            Protocol::OpenAiChat,
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{}}]}}]}\n\n",
            "without an index",
        ),
        (
            Protocol::OpenAiResponses,
            "data: {\"delta\":\"x\"}\n\n",
            "no /type",
        ),
        (
            Protocol::OpenAiResponses,
            "data: {\"type\":\"response.output_text.delta\"}\n\n",
            "no /delta",
        ),
        (
            Protocol::Anthropic,
            "data: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
            "not started",
        ),
        (
            Protocol::Anthropic,
            "data: {\"type\":\"content_block_start\",\"content_block\":{\"type\":\"text\"}}\n\n",
            "no block index",
        ),
        (Protocol::Anthropic, "data: [1, 2]\n\n", "no /type"),
    ];
    for (protocol, stream, why) in cases {
        match decode_in_pieces(*protocol, stream.as_bytes(), stream.len() / 2) {
            Err(ModelError::Malformed { why: w, .. }) => assert!(w.contains(why), "{w} / {why}"),
            other => panic!("{protocol:?} {stream:?}: {other:?}"),
        }
    }
    // Cut anywhere before its last event, each protocol's reply is incomplete.
    for (protocol, stream) in [
        (Protocol::OpenAiChat, OPENAI_CHAT),
        (Protocol::OpenAiResponses, RESPONSES),
        (Protocol::Anthropic, ANTHROPIC),
    ] {
        let last = stream.trim_end().rfind("data:").unwrap();
        for cut in (0..last).step_by(7) {
            let mut decoder = Decoder::new(protocol);
            decoder
                .feed(&stream.as_bytes()[..cut], &mut Vec::new())
                .unwrap();
            let e = decoder.finish().unwrap_err();
            assert!(
                matches!(
                    e,
                    ModelError::Incomplete | ModelError::Sse(SseError::Truncated)
                ),
                "{protocol:?} cut at {cut}: {e:?}"
            );
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet = b"data: {}[]\":,\n\r\xff typechoicesdelta_index0123";
    for round in 0..3000 {
        let protocol = [
            Protocol::OpenAiChat,
            Protocol::OpenAiResponses,
            Protocol::Anthropic,
        ][round % 3];
        let len = (next() % 200) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let mut decoder = Decoder::new(protocol);
        let _ = decoder
            .feed(&bytes, &mut Vec::new())
            .and_then(|()| decoder.finish());
    }
}

#[test]
fn a_streamed_http_reply_is_read_as_it_comes_and_a_broken_one_is_an_error() {
    let server = fake::sse_server(ANTHROPIC, 37, None, "sk-ant-SECRET");
    let request = ModelRequest::new(
        Protocol::Anthropic,
        &format!("{}/v1", server.url()),
        "sk-ant-SECRET",
        "claude",
        "hi",
    );
    let mut inputs = Vec::new();
    stream_reply(&request, |i| inputs.push(i)).unwrap();
    assert_eq!(inputs.len(), 8);
    assert_eq!(inputs[3], text("Here you go: "));

    let cut = OPENAI_CHAT.find("漢字").unwrap();
    let server = fake::sse_server(OPENAI_CHAT, 50, Some(cut), "sk-SECRET");
    let request = ModelRequest::new(
        Protocol::OpenAiChat,
        &server.url(),
        "sk-SECRET",
        "gpt",
        "hi",
    );
    let mut inputs = Vec::new();
    let e = stream_reply(&request, |i| inputs.push(i)).unwrap_err();
    assert!(
        matches!(
            e,
            ModelError::Incomplete | ModelError::Sse(_) | ModelError::Request(_)
        ),
        "{e:?}"
    );
    assert_eq!(
        inputs.last(),
        Some(&text("Héllo 👩‍👩‍👧 ")),
        "what came before the break was handed over"
    );

    let request = ModelRequest::new(
        Protocol::OpenAiChat,
        &server.url(),
        "sk-WRONG-key",
        "gpt",
        "hi",
    );
    let e = stream_reply(&request, |_| {}).unwrap_err().to_string();
    assert!(e.contains("401") && e.contains("Incorrect API key"), "{e}");
    assert!(!e.contains("WRONG"), "{e}");
}

/// A request logged with `{:?}` (as a host's error path may) does not show the API key.
#[test]
fn a_requests_debug_form_leaves_the_key_out() {
    let request = ModelRequest::new(
        Protocol::Anthropic,
        "http://127.0.0.1:9/v1",
        "sk-ant-SECRET-123",
        "claude-x",
        "Say hi",
    );
    let shown = format!("{request:?}");
    assert_eq!(
        shown,
        "ModelRequest { protocol: Anthropic, base_url: \"http://127.0.0.1:9/v1\", \
         api_key: \"<key>\", model: \"claude-x\", prompt: \"Say hi\", max_tokens: 4096, \
         stall_timeout: 120s }"
    );
}
