//! A JSON5 reader, as OpenClaw writes its configuration: comments (`//`, `/* */`), trailing
//! commas, unquoted keys, single-quoted strings, hexadecimal and signed numbers, `Infinity`,
//! `NaN`, and strings continued over a line with a backslash.
//!
//! Hand-written (about 400 lines) rather than a dependency: the library's only need is to
//! read one small file, a dependency would bring serde and a parser generator into every
//! build with the `openclaw` feature, and the errors here carry the line and column a user
//! needs to fix a file written by hand. Every value keeps the position it starts at, so the
//! configuration reader can point at a bad value too.
//!
//! Differences from JSON5 kept on purpose: identifiers are recognised with Rust's Unicode
//! `alphabetic`/`alphanumeric` classes (a close match of ECMAScript's `ID_Start`/
//! `ID_Continue`), and nesting deeper than [`MAX_DEPTH`] is refused instead of exhausting the
//! stack.

use std::fmt;

/// The deepest nesting of arrays and objects accepted.
pub(crate) const MAX_DEPTH: usize = 128;

/// A position in the text: 1-based line and column (the column counts characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pos {
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// A parsed value with the position of its first character.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Value {
    pub(crate) kind: Kind,
    pub(crate) pos: Pos,
}

/// One key of an object, with where the key was written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Member {
    pub(crate) key: String,
    pub(crate) key_pos: Pos,
    pub(crate) value: Value,
}

/// What a value is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    Null,
    Bool(bool),
    /// Every JSON5 number, as JavaScript holds it.
    Number(f64),
    String(String),
    Array(Vec<Value>),
    /// Members in file order; a repeated key is kept (the last one counts, as in JavaScript).
    Object(Vec<Member>),
}

impl Value {
    /// The value of `key` in an object (the last one if repeated), or `None`.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.members()?
            .iter()
            .rev()
            .find(|m| m.key == key)
            .map(|m| &m.value)
    }

    /// The members of an object, or `None` for any other value.
    pub(crate) fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    /// What the value is, in words, for error messages.
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            Kind::Null => "null".to_owned(),
            Kind::Bool(b) => b.to_string(),
            Kind::Number(n) => format_number(*n),
            Kind::String(s) => format!("{s:?}"),
            Kind::Array(_) => "an array".to_owned(),
            Kind::Object(_) => "an object".to_owned(),
        }
    }
}

/// A number as JavaScript would print it (`4000`, `1.5`, `Infinity`).
fn format_number(n: f64) -> String {
    if n.is_nan() {
        "NaN".to_owned()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        format!("{n}")
    }
}

/// A syntax error: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) pos: Pos,
    pub(crate) message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.pos.line, self.pos.column, self.message
        )
    }
}

/// Parses a whole JSON5 text: one value, surrounded only by whitespace and comments.
pub(crate) fn parse(text: &str) -> Result<Value, SyntaxError> {
    let mut p = Parser {
        text,
        at: 0,
        line: 1,
        column: 1,
    };
    p.skip_blank()?;
    let value = p.value(0)?;
    p.skip_blank()?;
    if let Some(c) = p.peek() {
        return Err(p.error(format!(
            "unexpected {} after the end of the value",
            shown(c)
        )));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a str,
    /// Byte offset of the next character.
    at: usize,
    line: usize,
    column: usize,
}

/// A character as an error message shows it.
fn shown(c: char) -> String {
    if c.is_control() || c.is_whitespace() {
        format!("character U+{:04X}", c as u32)
    } else {
        format!("'{c}'")
    }
}

fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// JSON5 white space: ECMAScript's WhiteSpace and LineTerminator.
fn is_blank(c: char) -> bool {
    matches!(c, '\t' | '\u{b}' | '\u{c}' | ' ' | '\u{a0}' | '\u{feff}')
        || is_line_terminator(c)
        || (c > '\u{7f}' && c.is_whitespace())
}

fn is_ident_start(c: char) -> bool {
    c == '$' || c == '_' || c.is_alphabetic()
}

fn is_ident_part(c: char) -> bool {
    is_ident_start(c) || c.is_alphanumeric() || c == '\u{200c}' || c == '\u{200d}'
}

impl Parser<'_> {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            pos: self.pos(),
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        let mut chars = self.text[self.at..].chars();
        chars.next();
        chars.next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        // CR LF is one line break: the LF starts the new line.
        if c == '\n' || (is_line_terminator(c) && !(c == '\r' && self.peek() == Some('\n'))) {
            self.line += 1;
            self.column = 1;
        } else if c != '\r' {
            self.column += 1;
        }
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), SyntaxError> {
        match self.peek() {
            Some(found) if found == c => {
                self.bump();
                Ok(())
            }
            Some(found) => Err(self.error(format!("expected {what}, found {}", shown(found)))),
            None => Err(self.error(format!("expected {what}, found the end of the text"))),
        }
    }

    /// Skips white space and comments.
    fn skip_blank(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek() {
                Some(c) if is_blank(c) => {
                    self.bump();
                }
                Some('/') if self.peek_second() == Some('/') => {
                    while let Some(c) = self.peek() {
                        if is_line_terminator(c) {
                            break;
                        }
                        self.bump();
                    }
                }
                Some('/') if self.peek_second() == Some('*') => {
                    let start = self.pos();
                    self.bump();
                    self.bump();
                    loop {
                        match self.bump() {
                            Some('*') if self.peek() == Some('/') => {
                                self.bump();
                                break;
                            }
                            Some(_) => {}
                            None => {
                                return Err(SyntaxError {
                                    pos: start,
                                    message: "this comment is never closed (no */)".to_owned(),
                                });
                            }
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        let pos = self.pos();
        let kind = match self.peek() {
            None => return Err(self.error("expected a value, found the end of the text")),
            Some('{') => self.object(depth)?,
            Some('[') => self.array(depth)?,
            Some(q @ ('"' | '\'')) => Kind::String(self.string(q)?),
            Some(c) if c.is_ascii_digit() || matches!(c, '+' | '-' | '.') => self.number()?,
            Some(c) if is_ident_start(c) || c == '\\' => {
                let word = self.identifier()?;
                match word.as_str() {
                    "null" => Kind::Null,
                    "true" => Kind::Bool(true),
                    "false" => Kind::Bool(false),
                    "Infinity" => Kind::Number(f64::INFINITY),
                    "NaN" => Kind::Number(f64::NAN),
                    _ => {
                        return Err(SyntaxError {
                            pos,
                            message: format!(
                                "unexpected word '{word}' (a text value needs quotes)"
                            ),
                        });
                    }
                }
            }
            Some(c) => return Err(self.error(format!("expected a value, found {}", shown(c)))),
        };
        Ok(Value { kind, pos })
    }

    fn enter(&self, depth: usize) -> Result<usize, SyntaxError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(depth + 1)
    }

    fn object(&mut self, depth: usize) -> Result<Kind, SyntaxError> {
        let depth = self.enter(depth)?;
        self.bump(); // {
        let mut members = Vec::new();
        loop {
            self.skip_blank()?;
            if self.eat('}') {
                return Ok(Kind::Object(members));
            }
            let key_pos = self.pos();
            let key = match self.peek() {
                Some(q @ ('"' | '\'')) => self.string(q)?,
                Some(c) if is_ident_start(c) || c == '\\' => self.identifier()?,
                Some(c) => {
                    return Err(self.error(format!("expected a key or '}}', found {}", shown(c))));
                }
                None => return Err(self.error("expected a key or '}', found the end of the text")),
            };
            self.skip_blank()?;
            self.expect(':', "':' after the key")?;
            self.skip_blank()?;
            let value = self.value(depth)?;
            members.push(Member {
                key,
                key_pos,
                value,
            });
            self.skip_blank()?;
            if self.eat(',') {
                continue;
            }
            self.expect('}', "',' or '}'")?;
            return Ok(Kind::Object(members));
        }
    }

    fn array(&mut self, depth: usize) -> Result<Kind, SyntaxError> {
        let depth = self.enter(depth)?;
        self.bump(); // [
        let mut items = Vec::new();
        loop {
            self.skip_blank()?;
            if self.eat(']') {
                return Ok(Kind::Array(items));
            }
            items.push(self.value(depth)?);
            self.skip_blank()?;
            if self.eat(',') {
                continue;
            }
            self.expect(']', "',' or ']'")?;
            return Ok(Kind::Array(items));
        }
    }

    /// An ECMAScript identifier name (a key, or a word such as `true`), `\uXXXX` escapes
    /// included.
    fn identifier(&mut self) -> Result<String, SyntaxError> {
        let mut out = String::new();
        loop {
            let c = match self.peek() {
                Some('\\') => {
                    let at = self.pos();
                    self.bump();
                    if !self.eat('u') {
                        return Err(SyntaxError {
                            pos: at,
                            message: "only \\u escapes are allowed in a key".to_owned(),
                        });
                    }
                    let c = self.unicode_escape(at)?;
                    let ok = if out.is_empty() {
                        is_ident_start(c)
                    } else {
                        is_ident_part(c)
                    };
                    if !ok {
                        return Err(SyntaxError {
                            pos: at,
                            message: format!("{} cannot be part of a key", shown(c)),
                        });
                    }
                    c
                }
                Some(c) if (out.is_empty() && is_ident_start(c)) || is_ident_part(c) => {
                    self.bump();
                    c
                }
                _ => return Ok(out),
            };
            out.push(c);
        }
    }

    /// A quoted string; the opening quote is next.
    fn string(&mut self, quote: char) -> Result<String, SyntaxError> {
        let start = self.pos();
        self.bump();
        let mut out = String::new();
        loop {
            match self.peek() {
                None => {
                    return Err(SyntaxError {
                        pos: start,
                        message: "this string is never closed".to_owned(),
                    });
                }
                Some(c) if c == quote => {
                    self.bump();
                    return Ok(out);
                }
                Some('\n' | '\r') => {
                    return Err(self.error(
                        "a line break inside a string must be escaped (\\n, or \\ at the end of the line)",
                    ));
                }
                Some('\\') => {
                    let at = self.pos();
                    self.bump();
                    self.escape(at, &mut out)?;
                }
                Some(c) => {
                    self.bump();
                    out.push(c);
                }
            }
        }
    }

    /// The escape after a backslash, appended to `out`.
    fn escape(&mut self, at: Pos, out: &mut String) -> Result<(), SyntaxError> {
        let Some(c) = self.bump() else {
            return Err(SyntaxError {
                pos: at,
                message: "this string is never closed".to_owned(),
            });
        };
        match c {
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => out.push('\0'),
            '1'..='9' | '0' => {
                return Err(SyntaxError {
                    pos: at,
                    message: "digits cannot be escaped (only \\0 alone)".to_owned(),
                });
            }
            'x' => {
                let code = self.hex_digits(2, at)?;
                out.push(char::from_u32(code).expect("two hex digits are a char"));
            }
            'u' => out.push(self.unicode_escape(at)?),
            // A line continuation: the backslash and the line break vanish (CR LF is one).
            '\r' => {
                self.eat('\n');
            }
            '\n' | '\u{2028}' | '\u{2029}' => {}
            other => out.push(other),
        }
        Ok(())
    }

    /// `count` hex digits as a number.
    fn hex_digits(&mut self, count: usize, at: Pos) -> Result<u32, SyntaxError> {
        let mut code = 0u32;
        for _ in 0..count {
            let digit = self
                .peek()
                .and_then(|c| c.to_digit(16))
                .ok_or(SyntaxError {
                    pos: at,
                    message: format!("expected {count} hexadecimal digits in this escape"),
                })?;
            self.bump();
            code = code * 16 + digit;
        }
        Ok(code)
    }

    /// The four hex digits after `\u` (and a second `\uXXXX` for a surrogate pair).
    fn unicode_escape(&mut self, at: Pos) -> Result<char, SyntaxError> {
        let high = self.hex_digits(4, at)?;
        if (0xD800..0xDC00).contains(&high) && self.text[self.at..].starts_with("\\u") {
            let save = (self.at, self.line, self.column);
            self.bump();
            self.bump();
            let low = self.hex_digits(4, at)?;
            if (0xDC00..0xE000).contains(&low) {
                let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                return Ok(char::from_u32(code).expect("a surrogate pair is a char"));
            }
            (self.at, self.line, self.column) = save;
        }
        char::from_u32(high).ok_or(SyntaxError {
            pos: at,
            message: format!("\\u{high:04X} is half of a surrogate pair, not a character"),
        })
    }

    fn number(&mut self) -> Result<Kind, SyntaxError> {
        let start = self.pos();
        let sign = match self.peek() {
            Some('-') => {
                self.bump();
                -1.0
            }
            Some('+') => {
                self.bump();
                1.0
            }
            _ => 1.0,
        };
        let bad = |message: &str| SyntaxError {
            pos: start,
            message: message.to_owned(),
        };
        if self.peek().is_some_and(is_ident_start) {
            let word = self.identifier()?;
            return match word.as_str() {
                "Infinity" => Ok(Kind::Number(sign * f64::INFINITY)),
                "NaN" => Ok(Kind::Number(f64::NAN)),
                _ => Err(bad("expected a number after the sign")),
            };
        }
        let rest = &self.text[self.at..];
        if rest.starts_with("0x") || rest.starts_with("0X") {
            self.bump();
            self.bump();
            let digits_start = self.at;
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.bump();
            }
            let digits = &self.text[digits_start..self.at];
            if digits.is_empty() {
                return Err(bad("expected hexadecimal digits after 0x"));
            }
            let value = digits.chars().fold(0f64, |acc, c| {
                acc * 16.0 + f64::from(c.to_digit(16).unwrap_or(0))
            });
            return self.end_of_number(sign * value, start);
        }
        let digits_start = self.at;
        let mut int_digits = 0;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
            int_digits += 1;
        }
        if int_digits > 1 && self.text[digits_start..].starts_with('0') {
            return Err(bad(
                "a number cannot start with 0 (write 0x for hexadecimal)",
            ));
        }
        let mut frac_digits = 0;
        if self.eat('.') {
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
                frac_digits += 1;
            }
        }
        if int_digits == 0 && frac_digits == 0 {
            return Err(bad("expected digits in this number"));
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            let mut exp_digits = 0;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
                exp_digits += 1;
            }
            if exp_digits == 0 {
                return Err(bad("expected digits after the exponent"));
            }
        }
        let literal = self.text[digits_start..self.at].trim_end_matches('.');
        let literal = if literal.starts_with('.') {
            format!("0{literal}")
        } else {
            literal.replace(".e", "e").replace(".E", "E")
        };
        let value: f64 = literal.parse().map_err(|_| bad("not a number"))?;
        self.end_of_number(sign * value, start)
    }

    /// A number must not run straight into a letter or digit (`12px`).
    fn end_of_number(&mut self, value: f64, start: Pos) -> Result<Kind, SyntaxError> {
        match self.peek() {
            Some(c) if is_ident_part(c) => Err(SyntaxError {
                pos: start,
                message: format!("unexpected {} right after a number", shown(c)),
            }),
            _ => Ok(Kind::Number(value)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(text: &str) -> f64 {
        match parse(text).unwrap().kind {
            Kind::Number(n) => n,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn string(text: &str) -> String {
        match parse(text).unwrap().kind {
            Kind::String(s) => s,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn err(text: &str) -> SyntaxError {
        parse(text).expect_err(text)
    }

    #[test]
    fn objects_with_comments_trailing_commas_and_bare_keys() {
        let text = "// OpenClaw\n{\n  agents: { defaults: { humanDelay: { mode: 'natural', }, }, },\n  /* block\n comment */ \"quoted key\": [1, 2, 3,],\n  $dollar_1: null,\n}\n";
        let v = parse(text).unwrap();
        let mode = v
            .get("agents")
            .and_then(|a| a.get("defaults"))
            .and_then(|d| d.get("humanDelay"))
            .and_then(|h| h.get("mode"))
            .unwrap();
        assert_eq!(mode.kind, Kind::String("natural".into()));
        assert_eq!(
            mode.pos,
            Pos {
                line: 3,
                column: 45
            }
        );
        let list = v.get("quoted key").unwrap();
        assert_eq!(
            list.kind,
            Kind::Array(vec![
                Value {
                    kind: Kind::Number(1.0),
                    pos: Pos {
                        line: 5,
                        column: 28
                    }
                },
                Value {
                    kind: Kind::Number(2.0),
                    pos: Pos {
                        line: 5,
                        column: 31
                    }
                },
                Value {
                    kind: Kind::Number(3.0),
                    pos: Pos {
                        line: 5,
                        column: 34
                    }
                },
            ])
        );
        assert_eq!(v.get("$dollar_1").unwrap().kind, Kind::Null);
        let keys: Vec<_> = v
            .members()
            .unwrap()
            .iter()
            .map(|m| m.key.as_str())
            .collect();
        assert_eq!(keys, ["agents", "quoted key", "$dollar_1"]);
    }

    #[test]
    fn numbers() {
        assert_eq!(num("4000"), 4000.0);
        assert_eq!(num("+1"), 1.0);
        assert_eq!(num("-5"), -5.0);
        assert_eq!(num("0x1F"), 31.0);
        assert_eq!(num("-0XfF"), -255.0);
        assert_eq!(num(".5"), 0.5);
        assert_eq!(num("5."), 5.0);
        assert_eq!(num("1e3"), 1000.0);
        assert_eq!(num("2.E2"), 200.0);
        assert_eq!(num("1.5e-1"), 0.15);
        assert_eq!(num("Infinity"), f64::INFINITY);
        assert_eq!(num("-Infinity"), f64::NEG_INFINITY);
        assert!(num("NaN").is_nan());
        assert!(err("01").message.contains("cannot start with 0"));
        assert!(err("12px").message.contains("right after a number"));
        assert!(err("-").message.contains("digits"));
        assert!(err("1e").message.contains("exponent"));
        assert!(err("0x").message.contains("hexadecimal"));
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(string("'it\\'s'"), "it's");
        assert_eq!(string("\"say \\\"hi\\\"\""), "say \"hi\"");
        assert_eq!(string("'a\\nb\\tc\\\\'"), "a\nb\tc\\");
        assert_eq!(string("'\\x41\\u00e9\\uD83D\\uDE00'"), "Aé😀");
        assert_eq!(string("'line \\\ncontinued'"), "line continued");
        assert_eq!(string("'line \\\r\ncontinued'"), "line continued");
        assert_eq!(string("'\\q\\0'"), "q\0");
        assert_eq!(
            string("'double \" inside single'"),
            "double \" inside single"
        );
        assert_eq!(string("'\u{2028}'"), "\u{2028}");
        assert!(err("'open").message.contains("never closed"));
        assert!(err("'a\nb'").message.contains("line break"));
        assert!(err("'\\1'").message.contains("digits"));
        assert!(err("'\\xZ1'").message.contains("hexadecimal"));
        assert!(err("'\\uD800'").message.contains("surrogate"));
    }

    #[test]
    fn keys_escaped_and_unicode() {
        let v = parse("{ caf\\u00e9: 1, größe: 2, 'a-b': 3 }").unwrap();
        assert!(v.get("café").is_some());
        assert!(v.get("größe").is_some());
        assert!(v.get("a-b").is_some());
        assert!(err("{ a-b: 1 }").message.contains("':'"));
        assert!(err("{ 1a: 1 }").message.contains("expected a key"));
    }

    #[test]
    fn repeated_keys_keep_all_and_the_last_counts() {
        let v = parse("{ a: 1, a: 2 }").unwrap();
        assert_eq!(v.get("a").unwrap().kind, Kind::Number(2.0));
        assert_eq!(v.members().unwrap().len(), 2);
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = err("{\n  a: 1\n  b: 2\n}");
        assert_eq!(e.pos, Pos { line: 3, column: 3 });
        assert_eq!(e.message, "expected ',' or '}', found 'b'");
        assert_eq!(
            e.to_string(),
            "line 3, column 3: expected ',' or '}', found 'b'"
        );
        let e = err("{ mode: natural }");
        assert_eq!(e.pos, Pos { line: 1, column: 9 });
        assert!(e.message.contains("needs quotes"));
        assert!(err("{ a: 1 } x").message.contains("after the end"));
        assert!(err("/* open").message.contains("never closed"));
        assert!(err("").message.contains("end of the text"));
        assert!(err("[1,,2]").message.contains("expected a value"));
        assert!(err("{,}").message.contains("expected a key"));
        let e = err("\r\n\r\n  ?");
        assert_eq!(e.pos, Pos { line: 3, column: 3 });
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let deep = "[".repeat(100_000);
        assert!(err(&deep).message.contains("nesting deeper"));
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn whitespace_kinds_and_byte_order_mark() {
        let v = parse("\u{feff}\u{a0}{\u{2003}a\u{3000}:\u{2029}1\u{b}\u{c}}").unwrap();
        assert_eq!(v.get("a").unwrap().kind, Kind::Number(1.0));
    }
}
