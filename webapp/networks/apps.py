from django.apps import AppConfig


class NetworksConfig(AppConfig):
    name = "webapp.networks"
    label = "networks"
    verbose_name = "Networks"

    def ready(self) -> None:
        from webapp.networks import signals  # noqa: F401 - connects the file clean-up
        from webapp.networks.serving import register_on_start, registered_before
        from webapp.site.signals import may_answer_early, serving

        serving.connect(register_on_start, dispatch_uid="networks.register_on_start")
        may_answer_early.connect(registered_before, dispatch_uid="networks.registered_before")
