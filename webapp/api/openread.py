"""The base of the API's reading views, shared by the apps whose endpoints the API describes."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework.views import APIView

RETRY = OpenApiParameter("retry", str, enum=["1"], description="1: queue a failed computation again.")


class OpenRead(APIView):
    """Reading: open to anyone with a job's id, as the game page is."""

    authentication_classes: list = []
    permission_classes: list = []
