"""One kit for computations made on demand and kept per position (attention maps, lens answers,
the lc0 comparison): the abstract cache row (``models``), the request side's serve / queue / lost
path on the on-demand lane (``serve``), the worker side's run under the row's lease (``run``,
``lease``), who asks (``clients``), every kind's fair-use limits by cost in one table (``limits``) and
the one refusal (``refused``).

Not an app: it has no table of its own. The jobs app and the feature apps import it; it imports
neither.
"""
