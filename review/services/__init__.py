"""Review services, one noun per module: ``access`` (who may decide), ``gate`` (when
synthesis may start), ``decisions`` (approve, reject, narrow, overrides, carry-over),
``reverify`` (a narrowed text against the claim's evidence) and ``capsules`` (the approved
claims a report is built from). Import each name from the module that owns it.

Other apps read the gate through two functions:

- ``gate.gate_status(run) -> GateStatus``: is synthesis allowed, and which claims still
  block it.
- ``capsules.approved_capsules(run) -> list[Capsule]``: the only claims a report may be
  built from.
"""
