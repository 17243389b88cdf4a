//! The TypeScript SDK's in-process server (`@resonatehq/sdk` 0.11.5,
//! `dist/src/network/local.js`) as `scripts/ts-server` serves it.
//!
//! | difference | TS server | canonical |
//! |---|---|---|
//! | a task's `resumes` (responses and snapshot) | the list of awaited ids, `"resumes": ["p1", "p2"]` | the count, `"resumes": 2`; in the snapshot the ids also as `resumes` entries `{id, awaited}` |
//!
//! A response keeps only the count: the spec's `TaskRecord.resumes` is a
//! count (types.lean), so that is all the spec defines there and all the
//! model can answer; the ids are held to the spec through the snapshot's
//! `resumes` component, which the model does define.

use serde_json::{json, Value};

/// Translate a response envelope in place.
pub fn response(_kind: &str, env: &mut Value) {
    if let Some(data) = env.get_mut("data") {
        if let Some(task) = data.get_mut("task") {
            resumes_to_count(task);
        }
    }
}

/// Translate a snapshot `data` object in place.
pub fn snapshot(data: &mut Value) {
    let mut buffered = Vec::new();
    if let Some(tasks) = data.get_mut("tasks").and_then(Value::as_array_mut) {
        for t in tasks {
            if let (Some(id), Some(ids)) = (t["id"].as_str(), t["resumes"].as_array()) {
                for a in ids {
                    buffered.push(json!({"id": id, "awaited": a}));
                }
            }
            resumes_to_count(t);
        }
    }
    if let Some(obj) = data.as_object_mut() {
        obj.entry("resumes").or_insert(Value::Array(buffered));
    }
}

/// `resumes: [ids]` → `resumes: count`; a count is left alone.
fn resumes_to_count(task: &mut Value) {
    if let Some(n) = task.get("resumes").and_then(Value::as_array).map(Vec::len) {
        task["resumes"] = json!(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_ids_become_a_count_and_resume_entries() {
        let mut snap = json!({"tasks": [{"id": "t", "resumes": ["a", "b"]}]});
        snapshot(&mut snap);
        assert_eq!(snap["tasks"][0]["resumes"], 2);
        assert_eq!(
            snap["resumes"],
            json!([{"id": "t", "awaited": "a"}, {"id": "t", "awaited": "b"}])
        );
        let mut env = json!({"data": {"task": {"id": "t", "resumes": ["a"]}}});
        response("task.get", &mut env);
        assert_eq!(env["data"]["task"]["resumes"], 1);
    }

    #[test]
    fn canonical_input_passes_through() {
        let mut snap =
            json!({"tasks": [{"id": "t", "resumes": 1}], "resumes": [{"id": "t", "awaited": "a"}]});
        let before = snap.clone();
        snapshot(&mut snap);
        assert_eq!(snap, before);
    }
}
