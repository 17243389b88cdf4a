//! T-02 `task.create`: `spec/02-actions/T-02-task.create.lean`.
//!
//! A new promise comes with its task already acquired at version 1, and its
//! promise timeout is armed unconditionally (unlike `promise.create`). An
//! existing promise must carry a target (422); its pending task is
//! re-acquired with a version bump, its fulfilled task returned as is, any
//! other state is 409. The existing branch checks neither the promise's state
//! nor its deadline, and returns the promise unprojected.

use crate::api::{TaskClaimRes, TaskCreateReq};
use crate::branch::*;
use crate::machine::Machine;
use crate::marker;
use crate::state::{timeout_state, PromiseObject, TaskObject, LEASE, TARGET};
use crate::types::{PromiseState, TaskState, Time, Value};

fn error(status: u16) -> TaskClaimRes {
    TaskClaimRes {
        status,
        task: None,
        promise: None,
        preload: Vec::new(),
    }
}

/// `taskCreate`.
pub fn task_create(m: &mut Machine, req: &TaskCreateReq, now: Time) -> TaskClaimRes {
    let a = &req.action;
    let Some(p) = m.state.get_promise(&a.id) else {
        return create_new(m, req, now);
    };
    if !p.tags.contains_key(TARGET) {
        m.hits.push(TASK_CREATE_EXISTS_NO_TARGET_422);
        return error(422);
    }
    let promise = p.to_record();
    let Some(t) = m.state.get_task(&p.id) else {
        m.hits.push(TASK_CREATE_EXISTS_NO_TASK_409);
        return error(409);
    };
    match t.state {
        TaskState::Fulfilled => {
            m.hits.push(TASK_CREATE_EXISTS_FULFILLED_200);
            let task = t.to_record();
            TaskClaimRes {
                status: 200,
                task: Some(task),
                promise: Some(promise),
                preload: Vec::new(),
            }
        }
        TaskState::Pending => {
            m.hits.push(TASK_CREATE_EXISTS_PENDING_REACQUIRED_200);
            let t = TaskObject {
                state: TaskState::Acquired,
                version: t.version + 1,
                ttl: Some(req.ttl),
                pid: Some(req.pid.clone()),
                resumes: Vec::new(),
                ..t.clone()
            };
            let task = t.to_record();
            let id = t.id.clone();
            m.state.set_task(t);
            m.state.del_task_timeout(&id);
            m.state
                .set_task_timeout(&id, LEASE, now.saturating_add(req.ttl));
            TaskClaimRes {
                status: 200,
                task: Some(task),
                promise: Some(promise),
                preload: Vec::new(),
            }
        }
        _ => {
            m.hits.push(TASK_CREATE_EXISTS_BUSY_409);
            error(409)
        }
    }
}

fn create_new(m: &mut Machine, req: &TaskCreateReq, now: Time) -> TaskClaimRes {
    let a = &req.action;
    marker::TASK_CREATE.record(&mut m.marks, a.timeout_at, now);
    let live = a.timeout_at > now;
    let p = PromiseObject {
        id: a.id.clone(),
        state: if live {
            PromiseState::Pending
        } else {
            timeout_state(&a.tags)
        },
        param: a.param.clone(),
        value: Value::default(),
        tags: a.tags.clone(),
        timeout_at: a.timeout_at,
        created_at: if live { now } else { a.timeout_at },
        settled_at: if live { None } else { Some(a.timeout_at) },
        callbacks: Vec::new(),
        listeners: Vec::new(),
    };
    let promise = p.to_record();
    m.state.set_promise(p);
    let t = if live {
        m.hits.push(TASK_CREATE_NEW_ACQUIRED_200);
        m.state.set_promise_timeout(&a.id, a.timeout_at);
        let t = TaskObject {
            ttl: Some(req.ttl),
            pid: Some(req.pid.clone()),
            ..TaskObject::new(&a.id, TaskState::Acquired, 1)
        };
        m.state.set_task(t.clone());
        m.state
            .set_task_timeout(&a.id, LEASE, now.saturating_add(req.ttl));
        t
    } else {
        m.hits.push(TASK_CREATE_NEW_EXPIRED_FULFILLED_200);
        let t = TaskObject::new(&a.id, TaskState::Fulfilled, 0);
        m.state.set_task(t.clone());
        t
    };
    TaskClaimRes {
        status: 200,
        task: Some(t.to_record()),
        promise: Some(promise),
        preload: Vec::new(),
    }
}
