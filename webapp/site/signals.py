"""What ``serve`` tells the apps, so that it names none of them."""

from django.dispatch import Signal

# Sent once Redis is up and before the worker starts, with ``log`` (a callable for warnings).
# A receiver returns the lines ``serve`` prints (what it registered); the networks app registers
# the shipped networks here.
serving = Signal()
