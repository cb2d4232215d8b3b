"""What ``serve`` tells the apps, so that it names none of them."""

from django.dispatch import Signal

# Sent once Redis is up and the workers are started, with ``log`` (a callable for warnings).
# A receiver returns the lines ``serve`` prints (what it registered); the networks app registers
# the shipped networks here.
serving = Signal()

# Sent before ``serving``: a receiver returns whether the site may answer before its ``serving`` work is
# done (the networks app: yes once an earlier start registered them). When every receiver says so, the web
# server starts first and its boot overlaps that work; on a new install it starts after.
may_answer_early = Signal()
