//! The response envelope held to the protocol: what an answer says about
//! itself, against the request it answers. The one rule, for every answer
//! a target gives over HTTP:
//!
//! - **Transport** (a [`TargetError`], exit 3): the body is not JSON; it is
//!   not an envelope (no numeric `head.status`, no string `kind`, no
//!   `data`); the HTTP status or `head.status` is a 5xx other than 501.
//! - **The envelope** (an [`EnvelopeDeparture`]: a divergence of the step
//!   the answer belongs to, its class naming the field): `head.corrId` is
//!   the one sent, `kind` the request's, `head.version` the protocol's
//!   ([`PROTOCOL_VERSION`]), and the HTTP status equals `head.status` (the
//!   Rust server and the TypeScript shim both answer with the envelope's
//!   status as the HTTP status). A well-formed answer that breaks one of
//!   these is the server's answer departing from the protocol, not a
//!   broken transport.
//! - **The debug surface** (checked by [`super::HttpTarget`], a target
//!   fault): `debug.start`, `debug.reset`, `debug.tick` and `debug.snap`
//!   answer `head.status` 200; without that the harness cannot drive the
//!   target at all.

use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use model::wire::PROTOCOL_VERSION;

use super::TargetError;

/// A field of a response envelope that the protocol fixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EnvelopeField {
    /// `head.corrId`: the request's, echoed.
    CorrId,
    /// `kind`: the request's.
    Kind,
    /// `head.version`: the protocol version.
    Version,
    /// The HTTP status: `head.status`.
    HttpStatus,
}

impl EnvelopeField {
    /// Its name in classes and messages.
    pub fn name(self) -> &'static str {
        match self {
            EnvelopeField::CorrId => "corrId",
            EnvelopeField::Kind => "kind",
            EnvelopeField::Version => "version",
            EnvelopeField::HttpStatus => "httpStatus",
        }
    }
}

impl fmt::Display for EnvelopeField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One field of one well-formed answer departing from the protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvelopeDeparture {
    /// The kind of the request answered: the step's own, or the debug
    /// request that went with it (`debug.snap`; `debug.start` and
    /// `debug.reset`, judged with a case's first step).
    pub answer: String,
    /// The field.
    pub field: EnvelopeField,
    /// What the protocol asks for there: the `corrId` sent, the kind
    /// asked, the protocol version, or `head.status`.
    pub want: String,
    /// What the answer had there (`(absent)` when nothing).
    pub got: String,
}

impl fmt::Display for EnvelopeDeparture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} answered {} {}, expected {}",
            self.answer, self.field, self.got, self.want
        )
    }
}

/// What an answer says about itself: its `kind` and `head`, each as sent
/// (any JSON, `null` when absent), so that a wrong type is judged like a
/// wrong value. Read from a whole envelope, `data` ignored.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct AnswerHead {
    /// `kind`.
    #[serde(default)]
    pub kind: Value,
    /// `head`.
    #[serde(default)]
    pub head: HeadFields,
}

/// The fields of a response `head` the protocol fixes.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct HeadFields {
    /// `corrId`.
    #[serde(default, rename = "corrId")]
    pub corr_id: Value,
    /// `status`.
    #[serde(default)]
    pub status: Value,
    /// `version`.
    #[serde(default)]
    pub version: Value,
}

impl AnswerHead {
    /// The head of an envelope already read as JSON.
    pub fn of(env: &Value) -> AnswerHead {
        let head = &env["head"];
        AnswerHead {
            kind: env["kind"].clone(),
            head: HeadFields {
                corr_id: head["corrId"].clone(),
                status: head["status"].clone(),
                version: head["version"].clone(),
            },
        }
    }

    /// `head.status`, when it is a number that can be a status.
    pub fn status(&self) -> Option<u16> {
        self.view().status()
    }

    /// Its fields, borrowed, for [`judge`].
    pub fn view(&self) -> HeadView<'_> {
        HeadView {
            kind: &self.kind,
            corr_id: &self.head.corr_id,
            status: &self.head.status,
            version: &self.head.version,
        }
    }
}

/// An [`AnswerHead`]'s fields borrowed from where they are: every answer's
/// envelope is judged, and copying them out of it cost more than judging.
#[derive(Clone, Copy, Debug)]
pub struct HeadView<'a> {
    /// `kind`.
    pub kind: &'a Value,
    /// `head.corrId`.
    pub corr_id: &'a Value,
    /// `head.status`.
    pub status: &'a Value,
    /// `head.version`.
    pub version: &'a Value,
}

impl<'a> HeadView<'a> {
    /// The head of an envelope already read as JSON (`null` for a field
    /// it lacks).
    pub fn of(env: &'a Value) -> HeadView<'a> {
        let head = &env["head"];
        HeadView {
            kind: &env["kind"],
            corr_id: &head["corrId"],
            status: &head["status"],
            version: &head["version"],
        }
    }

    /// `head.status`, when it is a number that can be a status.
    pub fn status(&self) -> Option<u16> {
        self.status.as_u64().and_then(|s| u16::try_from(s).ok())
    }
}

/// A status the protocol treats as the server failing: a 5xx, except 501
/// (the spec's answer to what it does not implement, e.g. the searches).
fn is_server_error(status: u16) -> bool {
    status >= 500 && status != 501
}

/// Judge one answer to a request of `kind` sent with `corr_id`, received
/// with HTTP status `http`: a transport fault, or the envelope's
/// departures (none for a conforming answer). `detail` describes the
/// answer in a fault's message.
pub fn judge(
    kind: &str,
    corr_id: &str,
    http: u16,
    answer: &HeadView,
    detail: &dyn Fn() -> String,
) -> Result<Vec<EnvelopeDeparture>, TargetError> {
    let Some(status) = answer.status() else {
        return Err(TargetError::BadEnvelope(format!(
            "{kind}: no numeric head.status in {}",
            detail()
        )));
    };
    if is_server_error(status) || is_server_error(http) {
        return Err(TargetError::ServerError(format!(
            "{kind}: HTTP {http}, head.status {status}: {}",
            detail()
        )));
    }
    if !answer.kind.is_string() {
        return Err(TargetError::BadEnvelope(format!(
            "{kind}: no string kind in {}",
            detail()
        )));
    }
    let mut out = Vec::new();
    let mut check = |field, want: &str, got: &Value| {
        if got.as_str() != Some(want) {
            out.push(EnvelopeDeparture {
                answer: kind.to_string(),
                field,
                want: format!("{want:?}"),
                got: shown(got),
            });
        }
    };
    check(EnvelopeField::CorrId, corr_id, answer.corr_id);
    check(EnvelopeField::Kind, kind, answer.kind);
    check(EnvelopeField::Version, PROTOCOL_VERSION, answer.version);
    if http != status {
        out.push(EnvelopeDeparture {
            answer: kind.to_string(),
            field: EnvelopeField::HttpStatus,
            want: status.to_string(),
            got: http.to_string(),
        });
    }
    Ok(out)
}

/// A JSON value as a message shows it.
fn shown(v: &Value) -> String {
    if v.is_null() {
        "(absent)".to_string()
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `judge` of an answer to `promise.get` sent as `c1`.
    fn judged(http: u16, env: &Value) -> Result<Vec<EnvelopeDeparture>, TargetError> {
        judge("promise.get", "c1", http, &HeadView::of(env), &String::new)
    }

    fn ok() -> Value {
        json!({"kind": "promise.get", "head": {"corrId": "c1", "status": 404, "version": PROTOCOL_VERSION}, "data": "not found"})
    }

    fn fields(d: &[EnvelopeDeparture]) -> Vec<EnvelopeField> {
        d.iter().map(|d| d.field).collect()
    }

    #[test]
    fn a_conforming_answer_departs_in_nothing() {
        let none = judged(404, &ok()).unwrap();
        assert_eq!(none, []);
    }

    #[test]
    fn each_echoed_field_and_the_http_status_are_departures() {
        let mut v = ok();
        v["kind"] = json!("promise.create");
        v["head"]["corrId"] = json!(7);
        v["head"]["version"] = Value::Null;
        let d = judged(200, &v).unwrap();
        assert_eq!(
            fields(&d),
            [
                EnvelopeField::CorrId,
                EnvelopeField::Kind,
                EnvelopeField::Version,
                EnvelopeField::HttpStatus
            ]
        );
        assert_eq!(
            d[0].to_string(),
            "promise.get answered corrId 7, expected \"c1\""
        );
        assert_eq!(d[2].got, "(absent)");
        assert_eq!(
            d[3].to_string(),
            "promise.get answered httpStatus 200, expected 404"
        );
    }

    #[test]
    fn a_5xx_either_way_and_a_missing_status_or_kind_are_faults() {
        let mut v = ok();
        let e = judged(500, &v);
        assert!(matches!(e, Err(TargetError::ServerError(_))), "{e:?}");
        v["head"]["status"] = json!(503);
        let e = judged(404, &v);
        assert!(matches!(e, Err(TargetError::ServerError(_))), "{e:?}");
        v["head"]["status"] = json!(501);
        let d = judged(501, &v);
        assert_eq!(d, Ok(vec![]), "501 is an answer");
        v["head"]["status"] = json!("200");
        let e = judged(200, &v);
        assert!(matches!(e, Err(TargetError::BadEnvelope(_))), "{e:?}");
        let mut v = ok();
        v["kind"] = Value::Null;
        let e = judged(404, &v);
        assert!(matches!(e, Err(TargetError::BadEnvelope(_))), "{e:?}");
    }

    /// A head read in place is the head copied out, field for field, null
    /// where the envelope lacks one, however malformed the envelope.
    #[test]
    fn a_head_read_in_place_is_the_head_copied_out() {
        let odd = [
            json!({}),
            json!({"head": 5}),
            json!({"head": {}}),
            json!([1, 2]),
            json!({"kind": 7, "head": {"corrId": null, "status": "200", "version": 1}}),
            ok(),
        ];
        for env in odd {
            let (view, copied) = (HeadView::of(&env), AnswerHead::of(&env));
            let copied = copied.view();
            let fields = |h: &HeadView| [h.kind, h.corr_id, h.status, h.version].map(Clone::clone);
            assert_eq!(fields(&view), fields(&copied), "{env}");
            assert_eq!(view.status(), copied.status(), "{env}");
        }
    }
}
