"""The front door: `preflight.validate` checks a spec before any data is read and builds the
evaluation's plan (`plan.EvaluationPlan`, every part built once); `evaluation.evaluate` runs its
steps in order (engine, pools, comparisons, history, outputs); `provenance` records what an
evaluation was; `pool` is `irpipe pool`.

Imports: every layer below it (engines, compare, checks, pools, history, outputs); never the
console or the command line.
"""
