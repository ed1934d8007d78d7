//! The program solved with microlp (pure Rust branch and bound), one stage
//! per tie-break of docs/placement.md, "Packing the most". Each stage keeps what the ones before
//! it won as a floor, and starts from their answer, so a stage can only
//! improve on the plan so far. The search is bounded by a count of branch
//! and bound nodes, never by the clock: two runs give the same plan.

use std::collections::HashMap;

use microlp::{ComparisonOp, OptimizationDirection, Problem, SolveOptions, Variable};

use super::model::{Op, Program, Row, Var};
use crate::placement::Placement;

/// Branch and bound nodes for one stage, and for all of them.
const STAGE_NODES: u64 = 400;
const TOTAL_NODES: u64 = 6000;

pub(super) struct Solved {
    /// Each variable's value.
    pub values: Vec<u32>,
    /// The most replicas any plan places, when the first stage proved it
    /// on a program that is exact (no request estimated).
    pub bound: Option<u64>,
}

/// Variable values for a set of placements (the start of the search), or
/// `None` when one of them has no variable (a start the program cannot
/// express is no start).
fn values_of(prog: &Program, placements: &[&Placement]) -> Option<Vec<u32>> {
    let mut single: HashMap<(u32, u32, u32), usize> = HashMap::new();
    let mut group: HashMap<(u32, u32, u32), usize> = HashMap::new();
    let mut part: HashMap<(usize, u32), usize> = HashMap::new();
    for (i, v) in prog.vars.iter().enumerate() {
        match *v {
            Var::Single { model, profile, node } => _ = single.insert((model, profile, node), i),
            Var::Group { model, profile, fabric, .. } => _ = group.insert((model, profile, fabric), i),
            Var::Part { group, node } => _ = part.insert((group, node), i),
        }
    }
    let mut x = vec![0u32; prog.vars.len()];
    for p in placements {
        match p.fabric {
            None => *x.get_mut(*single.get(&(p.model, p.profile, p.nodes.first()?.node))?)? += 1,
            Some(f) => {
                let g = *group.get(&(p.model, p.profile, f))?;
                x[g] += 1;
                for a in &p.nodes {
                    x[*part.get(&(g, a.node))?] += 1;
                }
            }
        }
    }
    feasible(prog, &x).then_some(x)
}

/// Whether integer values keep every row (firmly read) and bound.
pub(super) fn feasible(prog: &Program, x: &[u32]) -> bool {
    let holds = |r: &Row| {
        let lhs: f64 = r.terms.iter().map(|&(v, c)| c * f64::from(x[v])).sum();
        match r.op {
            Op::Le => lhs <= r.rhs + 1e-6,
            Op::Eq => (lhs - r.rhs).abs() <= 1e-6,
        }
    };
    x.iter().zip(&prog.ub).all(|(v, u)| v <= u) && prog.rows.iter().chain(&prog.firm).all(holds)
}

/// What a stage adds to the program: an objective, floors on earlier
/// objectives, and for the last stage one more variable per default match.
struct Stage {
    objective: Vec<(usize, f64)>,
    /// (var, most): a variable `s <= x[var]`, `s <= most`, in the objective.
    matches: Vec<(usize, u32)>,
}

/// Solves stage after stage; `None` when even the first finds nothing.
pub(super) fn lexicographic(prog: &Program, start: &[&Placement], default: &[&Placement]) -> Option<Solved> {
    let mut budget = TOTAL_NODES;
    let mut floors: Vec<(Vec<(usize, f64)>, f64)> = Vec::new();
    let all: Vec<(usize, f64)> = prog.models.iter().flat_map(|m| m.count.iter().map(|&v| (v, 1.0))).collect();
    let warm = values_of(prog, start);
    let (mut x, optimal, best) =
        run(prog, &Stage { objective: all.clone(), matches: Vec::new() }, &floors, warm.as_deref(), &mut budget)
            .or_else(|| warm.clone().map(|w| (w, false, None)))?;
    let bound = (optimal && prog.exact()).then(|| total(&all, &x)).or_else(|| {
        // Not proved, but the search's own bound holds on an exact program.
        best.filter(|_| prog.exact()).map(|b| (b + 1e-6).floor() as u64)
    });
    floors.push((all.clone(), total(&all, &x) as f64));
    // Model by model in catalog order: the most of each.
    for m in &prog.models {
        let have = total_of(&m.count, &x);
        if have < u64::from(m.demand) && !m.count.is_empty() {
            let obj: Vec<(usize, f64)> = m.count.iter().map(|&v| (v, 1.0)).collect();
            improve(prog, Stage { objective: obj.clone(), matches: Vec::new() }, &floors, &mut x, &mut budget);
        }
        floors.push((m.count.iter().map(|&v| (v, 1.0)).collect(), total_of(&m.count, &x) as f64));
    }
    // Then the profiles tried first, model by model.
    for m in &prog.models {
        for (rank, vars) in m.by_rank.iter().enumerate() {
            let have = total_of(vars, &x);
            let all_here = have == total_of(&m.count, &x);
            if !all_here && rank + 1 < m.by_rank.len() && !vars.is_empty() {
                let obj: Vec<(usize, f64)> = vars.iter().map(|&v| (v, 1.0)).collect();
                improve(prog, Stage { objective: obj, matches: Vec::new() }, &floors, &mut x, &mut budget);
            }
            floors.push((vars.iter().map(|&v| (v, 1.0)).collect(), total_of(vars, &x) as f64));
        }
    }
    // Last, the default plan's own choices wherever they still fit.
    if let Some(d) = values_of_loose(prog, default) {
        let matches: Vec<(usize, u32)> = d.iter().enumerate().filter(|(_, c)| **c > 0).map(|(v, c)| (v, *c)).collect();
        let have: u64 = matches.iter().map(|&(v, c)| u64::from(c.min(x[v]))).sum();
        let most: u64 = matches.iter().map(|&(_, c)| u64::from(c)).sum();
        if have < most {
            improve(prog, Stage { objective: Vec::new(), matches }, &floors, &mut x, &mut budget);
        }
    }
    Some(Solved { values: x, bound })
}

/// The default plan's counts per variable, whether or not they are all
/// feasible together with the floors (the last stage only reads them).
fn values_of_loose(prog: &Program, default: &[&Placement]) -> Option<Vec<u32>> {
    let mut x = vec![0u32; prog.vars.len()];
    for p in default {
        let one = values_of_unchecked(prog, p)?;
        for (v, c) in one {
            x[v] += c;
        }
    }
    Some(x)
}

fn values_of_unchecked(prog: &Program, p: &Placement) -> Option<Vec<(usize, u32)>> {
    let node = p.nodes.first()?.node;
    match p.fabric {
        None => prog
            .vars
            .iter()
            .position(|v| *v == Var::Single { model: p.model, profile: p.profile, node })
            .map(|i| vec![(i, 1)]),
        Some(f) => {
            let g = prog.vars.iter().position(
                |v| matches!(*v, Var::Group { model, profile, fabric, .. } if model == p.model && profile == p.profile && fabric == f),
            )?;
            let mut out = vec![(g, 1)];
            for a in &p.nodes {
                out.push((prog.vars.iter().position(|v| *v == Var::Part { group: g, node: a.node })?, 1));
            }
            Some(out)
        }
    }
}

fn total(terms: &[(usize, f64)], x: &[u32]) -> u64 {
    terms.iter().map(|&(v, _)| u64::from(x[v])).sum()
}

fn total_of(vars: &[usize], x: &[u32]) -> u64 {
    vars.iter().map(|&v| u64::from(x[v])).sum()
}

/// Runs a stage from `x` and keeps its answer when it is feasible and no
/// worse on the stage's objective.
fn improve(prog: &Program, stage: Stage, floors: &[(Vec<(usize, f64)>, f64)], x: &mut Vec<u32>, budget: &mut u64) {
    if *budget == 0 {
        return;
    }
    if let Some((y, _, _)) = run(prog, &stage, floors, Some(x), budget) {
        let score = |x: &[u32]| -> u64 {
            total(&stage.objective, x) + stage.matches.iter().map(|&(v, c)| u64::from(c.min(x[v]))).sum::<u64>()
        };
        if score(&y) >= score(x) && floors.iter().all(|(t, f)| total(t, &y) as f64 >= *f) {
            *x = y;
        }
    }
}

/// One solve: the program with the stage's objective and the floors;
/// its rounded values, whether proved optimal, and the search's bound.
fn run(
    prog: &Program,
    stage: &Stage,
    floors: &[(Vec<(usize, f64)>, f64)],
    warm: Option<&[u32]>,
    budget: &mut u64,
) -> Option<(Vec<u32>, bool, Option<f64>)> {
    let mut p = Problem::new(OptimizationDirection::Maximize);
    let mut coef = vec![0.0; prog.vars.len()];
    for &(v, c) in &stage.objective {
        coef[v] += c;
    }
    let vars: Vec<Variable> =
        prog.vars.iter().enumerate().map(|(i, _)| p.add_integer_var(coef[i], (0, prog.ub[i] as i32))).collect();
    for r in prog.rows.iter().chain(&prog.firm) {
        let terms: Vec<(Variable, f64)> = r.terms.iter().map(|&(v, c)| (vars[v], c)).collect();
        let op = if r.op == Op::Eq { ComparisonOp::Eq } else { ComparisonOp::Le };
        p.add_constraint(&terms[..], op, r.rhs);
    }
    for (terms, floor) in floors {
        let terms: Vec<(Variable, f64)> = terms.iter().map(|&(v, c)| (vars[v], c)).collect();
        p.add_constraint(&terms[..], ComparisonOp::Ge, *floor);
    }
    let mut hint: Vec<(Variable, f64)> = Vec::new();
    if let Some(w) = warm {
        hint.extend(w.iter().enumerate().map(|(i, &x)| (vars[i], f64::from(x))));
    }
    for &(v, most) in &stage.matches {
        let s = p.add_integer_var(1.0, (0, most as i32));
        p.add_constraint(&[(s, 1.0), (vars[v], -1.0)][..], ComparisonOp::Le, 0.0);
        if let Some(w) = warm {
            hint.push((s, f64::from(most.min(w[v]))));
        }
    }
    let mut opts = SolveOptions::default();
    let nodes = STAGE_NODES.min(*budget);
    opts.node_limit = Some(nodes);
    if warm.is_some() {
        opts.warm_start = Some(hint);
    }
    // A solver that fails (or panics, which microlp does on numerical
    // trouble it cannot recover from) leaves the plan to the greedy orders.
    let outcome = guarded(|| p.solve_with(opts))?.ok()?;
    let stats = outcome.stats();
    *budget = budget.saturating_sub(stats.nodes_solved.max(1));
    let optimal = outcome.is_optimal();
    let sol = outcome.solution()?;
    let x: Vec<u32> = vars.iter().map(|&v| sol.var_value(v).round().max(0.0) as u32).collect();
    feasible(prog, &x).then_some((x, optimal, stats.best_bound))
}

/// The linear relaxation of the program with requests read loosely: no
/// plan places more replicas than its value. `None` when it fails.
pub(super) fn relaxed(prog: &Program) -> Option<u64> {
    let mut p = Problem::new(OptimizationDirection::Maximize);
    let mut coef = vec![0.0; prog.vars.len()];
    for m in &prog.models {
        for &v in &m.count {
            coef[v] = 1.0;
        }
    }
    let vars: Vec<Variable> =
        prog.vars.iter().enumerate().map(|(i, _)| p.add_var(coef[i], (0.0, f64::from(prog.ub_loose[i])))).collect();
    for r in prog.rows.iter().chain(&prog.loose) {
        let terms: Vec<(Variable, f64)> = r.terms.iter().map(|&(v, c)| (vars[v], c)).collect();
        let op = if r.op == Op::Eq { ComparisonOp::Eq } else { ComparisonOp::Le };
        p.add_constraint(&terms[..], op, r.rhs);
    }
    let sol = guarded(|| p.solve())?.ok()?;
    Some(floor(sol.solution()?.objective()))
}

/// A linear program's value as a count of replicas: rounded down, with
/// room for the solver's rounding (values are rationals of small
/// denominators, far from a whole number or on it).
pub(super) fn floor(v: f64) -> u64 {
    (v + 1e-3).floor().max(0.0) as u64
}

/// Runs the solver; `None` if it panics (microlp does on numerical trouble
/// it cannot recover from). Its message is kept off the terminal: the plan
/// goes on without the solver, and a panic message would read as llmgw's.
pub(super) fn guarded<T>(solve: impl FnOnce() -> T) -> Option<T> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(solve)).ok();
    std::panic::set_hook(hook);
    out
}
