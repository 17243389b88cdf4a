//! A path-tracking reader over a JSON object: every accessor reports a
//! failure as a [`DecodeError`] naming the field's full path, which is what
//! makes a bad request diagnosable from the 400 alone.
//!
//! Optionality mirrors the server's serde derives: an `Option` field accepts
//! a missing key or `null`; a defaulted field (`tags`, `param`, `value`)
//! accepts a missing key but not `null`; a required field accepts neither.

use serde_json::{Map, Value as Json};

use super::{DecodeError, MAX_INT};
use crate::types::{Tags, Value};

/// One JSON object and its path.
pub(crate) struct Obj<'a> {
    path: String,
    map: &'a Map<String, Json>,
}

/// `path.key`, or `key` at the root.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Read a non-negative integer that fits the server's `i64`.
pub(crate) fn nat(v: &Json, path: &str) -> Result<u64, DecodeError> {
    match v.as_u64() {
        Some(n) if n <= MAX_INT => Ok(n),
        _ => Err(DecodeError::new(path, "expected a non-negative integer")),
    }
}

impl<'a> Obj<'a> {
    /// `v` as an object at `path`.
    pub(crate) fn new(v: &'a Json, path: &str) -> Result<Self, DecodeError> {
        match v {
            Json::Object(map) => Ok(Obj {
                path: path.to_string(),
                map,
            }),
            _ => Err(DecodeError::new(path, "expected an object")),
        }
    }

    /// The path of `key` in this object.
    pub(crate) fn at(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// A present, non-null field.
    pub(crate) fn req(&self, key: &str) -> Result<&'a Json, DecodeError> {
        match self.map.get(key) {
            None | Some(Json::Null) => Err(DecodeError::new(self.at(key), "missing field")),
            Some(v) => Ok(v),
        }
    }

    /// A field as it is, `null` included.
    pub(crate) fn get(&self, key: &str) -> Option<&'a Json> {
        self.map.get(key)
    }

    /// A field that may be missing or `null`.
    pub(crate) fn opt(&self, key: &str) -> Option<&'a Json> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// A field that may be missing but, when present, is not `null`.
    fn defaulted(&self, key: &str) -> Result<Option<&'a Json>, DecodeError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Json::Null) => Err(DecodeError::new(self.at(key), "must not be null")),
            Some(v) => Ok(Some(v)),
        }
    }

    /// A required string.
    pub(crate) fn str(&self, key: &str) -> Result<String, DecodeError> {
        as_str(self.req(key)?, &self.at(key))
    }

    /// An optional string.
    pub(crate) fn opt_str(&self, key: &str) -> Result<Option<String>, DecodeError> {
        self.opt(key).map(|v| as_str(v, &self.at(key))).transpose()
    }

    /// A required non-negative integer.
    pub(crate) fn nat(&self, key: &str) -> Result<u64, DecodeError> {
        nat(self.req(key)?, &self.at(key))
    }

    /// An optional non-negative integer.
    pub(crate) fn opt_nat(&self, key: &str) -> Result<Option<u64>, DecodeError> {
        self.opt(key).map(|v| nat(v, &self.at(key))).transpose()
    }

    /// A required object.
    pub(crate) fn obj(&self, key: &str) -> Result<Obj<'a>, DecodeError> {
        Obj::new(self.req(key)?, &self.at(key))
    }

    /// A required array.
    pub(crate) fn arr(&self, key: &str) -> Result<&'a Vec<Json>, DecodeError> {
        self.req(key)?
            .as_array()
            .ok_or_else(|| DecodeError::new(self.at(key), "expected an array"))
    }

    /// Defaulted tags (`{}` when missing).
    pub(crate) fn tags(&self, key: &str) -> Result<Tags, DecodeError> {
        match self.defaulted(key)? {
            None => Ok(Tags::new()),
            Some(v) => tags(v, &self.at(key)),
        }
    }

    /// Optional tags (`{}` when missing or `null`).
    pub(crate) fn opt_tags(&self, key: &str) -> Result<Tags, DecodeError> {
        match self.opt(key) {
            None => Ok(Tags::new()),
            Some(v) => tags(v, &self.at(key)),
        }
    }

    /// A defaulted `{headers?, data?}` value.
    pub(crate) fn value(&self, key: &str) -> Result<Value, DecodeError> {
        let Some(v) = self.defaulted(key)? else {
            return Ok(Value::default());
        };
        let o = Obj::new(v, &self.at(key))?;
        Ok(Value {
            headers: o.opt_tags("headers")?,
            data: o.opt_str("data")?,
        })
    }

    /// A required string drawn from a fixed set, mapped by `parse`.
    pub(crate) fn choice<T>(
        &self,
        key: &str,
        expected: &str,
        parse: fn(&str) -> Option<T>,
    ) -> Result<T, DecodeError> {
        let s = self.str(key)?;
        parse(&s).ok_or_else(|| DecodeError::new(self.at(key), format!("expected {expected}")))
    }

    /// An optional string drawn from a fixed set.
    pub(crate) fn opt_choice<T>(
        &self,
        key: &str,
        expected: &str,
        parse: fn(&str) -> Option<T>,
    ) -> Result<Option<T>, DecodeError> {
        match self.opt(key) {
            None => Ok(None),
            Some(_) => self.choice(key, expected, parse).map(Some),
        }
    }
}

fn as_str(v: &Json, path: &str) -> Result<String, DecodeError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| DecodeError::new(path, "expected a string"))
}

fn tags(v: &Json, path: &str) -> Result<Tags, DecodeError> {
    let o = Obj::new(v, path)?;
    o.map
        .iter()
        .map(|(k, v)| Ok((k.clone(), as_str(v, &join(path, k))?)))
        .collect()
}
