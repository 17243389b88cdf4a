//! The typed comparison: whether a target's response envelope equals the
//! model's typed answer once normalised, decided without encoding the
//! model's answer as JSON.
//!
//! [`same_answer`] decides exactly what [`super::same_response`] decides of
//! the envelope [`model::wire::encode_response`] would write, field by
//! field: the model's side is read from the typed [`Response`] through
//! [`success_data`] (the one place the `data` shapes are written) and its
//! records through their `Serialize` impls, each value compared as it is
//! serialised ([`Cmp`], a `serde::Serializer` whose output is the verdict).
//! It only ever answers "the same": a difference, or a shape it does not
//! cover (a float, bytes, an enum variant with data, a map key that is not
//! a string, a 1xx/3xx status carrying a message), is left to the JSON
//! path, which then builds both normal forms and names what differs, so
//! every divergence and its message come from one place.

use std::fmt;

use serde::ser::{self, Serialize};
use serde_json::{Map, Value};

use model::api::Response;
use model::wire::{success_data, DataField, DataFields};

/// `Some(true)` when `target` equals the envelope of `res` (an answer to a
/// request of kind `kind`) once normalised; `Some(false)` when it does
/// not; `None` where the typed path does not decide.
pub fn same_answer(kind: &str, res: &Response, target: &Value) -> Option<bool> {
    same(res.status(), success_data(kind, res), target).ok()
}

/// A shape the typed path does not decide.
#[derive(Debug)]
pub struct Uncovered;

impl fmt::Display for Uncovered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a shape the typed comparison does not cover")
    }
}

impl std::error::Error for Uncovered {}

impl ser::Error for Uncovered {
    fn custom<T: fmt::Display>(_: T) -> Uncovered {
        Uncovered
    }
}

/// [`super::same_response`], the model's side typed: its status, and the
/// fields of its success `data` (`None`: a message).
fn same(status: u16, fields: Option<DataFields>, b: &Value) -> Result<bool, Uncovered> {
    let sb = b.get("head").and_then(|h| h.get("status"));
    if sb.and_then(Value::as_u64) != Some(u64::from(status)) {
        return Ok(false);
    }
    if status >= 400 {
        return Ok(true);
    }
    // Below 400 without a success body the model writes a message, which
    // is compared as text: the JSON path's.
    let fields = fields.ok_or(Uncovered)?;
    // The model's `data` is an object; anything else differs.
    let Some(y) = b.get("data").and_then(Value::as_object) else {
        return Ok(false);
    };
    let mut action = None;
    let mut kept = 0;
    for (key, field) in fields.iter() {
        if key == "action" {
            action = Some(field);
            continue;
        }
        let w = y.get(key);
        match field_cmp(key, field, w)? {
            Field::Blank => {}
            Field::Same => kept += 1,
            Field::Differ => return Ok(false),
        }
    }
    // The fenced action, compared as a whole envelope (`null` is absent).
    let theirs = y.get("action").filter(|v| !v.is_null());
    let ours = match action {
        Some(DataField::Action(a)) => a,
        Some(_) => return Err(Uncovered),
        None => None,
    };
    match (ours, theirs) {
        (None, None) => {}
        (Some((kind, inner)), Some(q)) => {
            let inner = Response::Promise(inner.clone());
            if !same(inner.status(), success_data(kind, &inner), q)? {
                return Ok(false);
            }
        }
        _ => return Ok(false),
    }
    let theirs_kept = y
        .iter()
        .filter(|(k, v)| k.as_str() != "action" && !is_blank(k, v))
        .count();
    Ok(kept == theirs_kept)
}

/// One `data` field against the target's value under its key.
fn field_cmp(key: &str, field: DataField, w: Option<&Value>) -> Result<Field, Uncovered> {
    let cmp = Cmp::entry(key, w);
    match field {
        DataField::Promise(p) => p.serialize(cmp),
        DataField::Task(t) => t.serialize(cmp),
        DataField::Schedule(s) => s.serialize(cmp),
        DataField::Preload(p) => p.serialize(cmp),
        DataField::Empty => <[u8; 0]>::serialize(&[], cmp),
        DataField::Action(_) => Err(Uncovered),
    }
}

/// `null`, or an empty `headers` object: absent on the wire
/// ([`super::canon`]'s rule).
fn is_blank(key: &str, v: &Value) -> bool {
    v.is_null() || (key == "headers" && v.as_object().is_some_and(Map::is_empty))
}

/// What one model value is against the target's, as
/// [`super::same_canon`] sees it under an object key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The model's value is blank (`null`, or empty `headers`): the key
    /// counts as absent, whatever the target holds there (the caller
    /// counts the target's non-blank keys).
    Blank,
    /// Not blank, and equal to the target's once canonical.
    Same,
    /// Not blank, and the target's is blank, absent or different.
    Differ,
}

/// A serializer that compares the value it is given with `w`, the
/// target's: `same_canon(to_value(v), w)`, without building `to_value(v)`.
#[derive(Clone, Copy)]
pub struct Cmp<'a> {
    /// The target's value; `None`: absent.
    w: Option<&'a Value>,
    /// Under an object key: the model's blanks are [`Field::Blank`], and
    /// the key says whether an empty object is blank (`headers`).
    key: Option<Key>,
}

/// The kind of object key a value sits under.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Headers,
    Other,
}

impl<'a> Cmp<'a> {
    /// A value under object key `key`, the target's being `w`.
    pub fn entry(key: &str, w: Option<&'a Value>) -> Cmp<'a> {
        Cmp {
            w,
            key: Some(if key == "headers" {
                Key::Headers
            } else {
                Key::Other
            }),
        }
    }

    /// An array element: never blank.
    fn element(w: &'a Value) -> Cmp<'a> {
        Cmp {
            w: Some(w),
            key: None,
        }
    }

    /// Whether the target's value is blank where this one sits.
    fn target_blank(&self) -> bool {
        match self.w {
            None => true,
            Some(w) => {
                self.key.is_some()
                    && (w.is_null()
                        || (self.key == Some(Key::Headers)
                            && w.as_object().is_some_and(Map::is_empty)))
            }
        }
    }

    /// A scalar of the model's: equal when the target holds it.
    fn scalar(self, eq: impl FnOnce(&Value) -> bool) -> Result<Field, Uncovered> {
        Ok(verdict(self.w.is_some_and(eq)))
    }

    /// The model's `null`.
    fn null(self) -> Result<Field, Uncovered> {
        if self.key.is_some() {
            return Ok(Field::Blank);
        }
        self.scalar(Value::is_null)
    }
}

fn verdict(same: bool) -> Field {
    if same {
        Field::Same
    } else {
        Field::Differ
    }
}

impl<'a> ser::Serializer for Cmp<'a> {
    type Ok = Field;
    type Error = Uncovered;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = ser::Impossible<Field, Uncovered>;
    type SerializeMap = Obj<'a>;
    type SerializeStruct = Obj<'a>;
    type SerializeStructVariant = ser::Impossible<Field, Uncovered>;

    fn serialize_bool(self, v: bool) -> Result<Field, Uncovered> {
        self.scalar(|w| w.as_bool() == Some(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Field, Uncovered> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<Field, Uncovered> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<Field, Uncovered> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Field, Uncovered> {
        // serde_json writes a non-negative integer as unsigned.
        match u64::try_from(v) {
            Ok(u) => self.serialize_u64(u),
            Err(_) => self.scalar(|w| w.is_i64() && w.as_i64() == Some(v)),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Field, Uncovered> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<Field, Uncovered> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<Field, Uncovered> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<Field, Uncovered> {
        // `as_u64` is `None` for a float: 200.0 is not 200, as for `Value`.
        self.scalar(|w| w.as_u64() == Some(v))
    }
    fn serialize_f32(self, _: f32) -> Result<Field, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_f64(self, _: f64) -> Result<Field, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_char(self, v: char) -> Result<Field, Uncovered> {
        let mut buf = [0; 4];
        self.serialize_str(v.encode_utf8(&mut buf))
    }
    fn serialize_str(self, v: &str) -> Result<Field, Uncovered> {
        self.scalar(|w| w.as_str() == Some(v))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Field, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_none(self) -> Result<Field, Uncovered> {
        self.null()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Field, Uncovered> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Field, Uncovered> {
        self.null()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Field, Uncovered> {
        self.null()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Field, Uncovered> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Field, Uncovered> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Field, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'a>, Uncovered> {
        Ok(Seq {
            theirs: self.w.and_then(Value::as_array).map(Vec::as_slice),
            at: 0,
            same: true,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a>, Uncovered> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq<'a>, Uncovered> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Obj<'a>, Uncovered> {
        Ok(Obj {
            theirs: if self.target_blank() {
                None
            } else {
                self.w.and_then(Value::as_object)
            },
            headers: self.key == Some(Key::Headers),
            entries: 0,
            kept: 0,
            same: true,
            pending: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Obj<'a>, Uncovered> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Uncovered> {
        Err(Uncovered)
    }
}

/// An array of the model's against the target's (`None`: not an array):
/// the same length, each element the same.
pub struct Seq<'a> {
    theirs: Option<&'a [Value]>,
    at: usize,
    same: bool,
}

impl Seq<'_> {
    fn element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Uncovered> {
        let w = self.theirs.and_then(|t| t.get(self.at));
        self.at += 1;
        match w {
            Some(w) if self.same => {
                self.same = v.serialize(Cmp::element(w))? == Field::Same;
            }
            _ => self.same = false,
        }
        Ok(())
    }

    fn done(self) -> Result<Field, Uncovered> {
        Ok(verdict(
            self.same && self.theirs.is_some_and(|t| t.len() == self.at),
        ))
    }
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = Field;
    type Error = Uncovered;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Uncovered> {
        self.element(v)
    }
    fn end(self) -> Result<Field, Uncovered> {
        self.done()
    }
}

impl ser::SerializeTuple for Seq<'_> {
    type Ok = Field;
    type Error = Uncovered;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Uncovered> {
        self.element(v)
    }
    fn end(self) -> Result<Field, Uncovered> {
        self.done()
    }
}

impl ser::SerializeTupleStruct for Seq<'_> {
    type Ok = Field;
    type Error = Uncovered;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Uncovered> {
        self.element(v)
    }
    fn end(self) -> Result<Field, Uncovered> {
        self.done()
    }
}

/// An object of the model's against the target's (`None`: blank or not an
/// object): every non-blank entry of the model's the same under the
/// target's key, and as many non-blank entries on either side.
pub struct Obj<'a> {
    theirs: Option<&'a Map<String, Value>>,
    /// Under `headers`: with no entries the model's object is blank.
    headers: bool,
    entries: usize,
    kept: usize,
    same: bool,
    /// A map key read, waiting for its value: the target's value there and
    /// the key's kind.
    pending: Option<(Option<&'a Value>, Key)>,
}

impl<'a> Obj<'a> {
    fn entry<T: ?Sized + Serialize>(
        &mut self,
        w: Option<&'a Value>,
        key: Key,
        v: &T,
    ) -> Result<(), Uncovered> {
        self.entries += 1;
        let cmp = Cmp { w, key: Some(key) };
        match v.serialize(cmp)? {
            Field::Blank => {}
            Field::Same => self.kept += 1,
            Field::Differ => self.same = false,
        }
        Ok(())
    }

    fn field<T: ?Sized + Serialize>(&mut self, key: &str, v: &T) -> Result<(), Uncovered> {
        let w = self.theirs.and_then(|m| m.get(key));
        let kind = if key == "headers" {
            Key::Headers
        } else {
            Key::Other
        };
        self.entry(w, kind, v)
    }

    fn done(self) -> Result<Field, Uncovered> {
        if self.headers && self.entries == 0 {
            return Ok(Field::Blank);
        }
        let Some(theirs) = self.theirs else {
            return Ok(Field::Differ);
        };
        let theirs_kept = theirs.iter().filter(|(k, v)| !is_blank(k, v)).count();
        Ok(verdict(self.same && self.kept == theirs_kept))
    }
}

impl<'a> ser::SerializeMap for Obj<'a> {
    type Ok = Field;
    type Error = Uncovered;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Uncovered> {
        let theirs = self.theirs;
        self.pending = Some(key.serialize(KeyOf(theirs))?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Uncovered> {
        let (w, key) = self.pending.take().ok_or(Uncovered)?;
        self.entry(w, key, v)
    }
    fn end(self) -> Result<Field, Uncovered> {
        self.done()
    }
}

impl ser::SerializeStruct for Obj<'_> {
    type Ok = Field;
    type Error = Uncovered;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Uncovered> {
        self.field(key, v)
    }
    fn end(self) -> Result<Field, Uncovered> {
        self.done()
    }
}

/// A map key: looked up in the target's object (`None`: no object) as
/// serde_json would write it; only string keys are covered.
struct KeyOf<'a>(Option<&'a Map<String, Value>>);

impl<'a> KeyOf<'a> {
    fn found(self, key: &str) -> (Option<&'a Value>, Key) {
        let kind = if key == "headers" {
            Key::Headers
        } else {
            Key::Other
        };
        (self.0.and_then(|m| m.get(key)), kind)
    }
}

/// The key shapes that are not strings.
macro_rules! uncovered {
    ($($f:ident($t:ty)),* $(,)?) => {
        $(fn $f(self, _: $t) -> Result<Self::Ok, Uncovered> { Err(Uncovered) })*
    };
}

impl<'a> ser::Serializer for KeyOf<'a> {
    type Ok = (Option<&'a Value>, Key);
    type Error = Uncovered;
    type SerializeSeq = ser::Impossible<Self::Ok, Uncovered>;
    type SerializeTuple = ser::Impossible<Self::Ok, Uncovered>;
    type SerializeTupleStruct = ser::Impossible<Self::Ok, Uncovered>;
    type SerializeTupleVariant = ser::Impossible<Self::Ok, Uncovered>;
    type SerializeMap = ser::Impossible<Self::Ok, Uncovered>;
    type SerializeStruct = ser::Impossible<Self::Ok, Uncovered>;
    type SerializeStructVariant = ser::Impossible<Self::Ok, Uncovered>;

    fn serialize_str(self, v: &str) -> Result<Self::Ok, Uncovered> {
        Ok(self.found(v))
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Self::Ok, Uncovered> {
        Ok(self.found(variant))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Self::Ok, Uncovered> {
        v.serialize(self)
    }
    uncovered!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_bytes(&[u8]),
    );
    fn serialize_none(self) -> Result<Self::Ok, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<Self::Ok, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_unit(self) -> Result<Self::Ok, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Self::Ok, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Self::Ok, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Uncovered> {
        Err(Uncovered)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Uncovered> {
        Err(Uncovered)
    }
}
