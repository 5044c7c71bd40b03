"""What Airflow's providers manager reads through the ``apache_airflow_provider``
entry point: the connection type, hooks, sensors, triggers and operators."""

from __future__ import annotations

from typing import Any


def ui_field_behaviour() -> dict[str, Any]:
    """The form of a ``gapless`` connection (hidden fields, labels,
    placeholders), spelt as provider info spells it: Airflow 3 reads it from
    here without importing the hook, and the hook's
    ``get_ui_field_behaviour`` answers the same form."""
    return {
        "hidden-fields": ["login"],
        "relabeling": {"schema": "Scheme", "password": "Token"},
        "placeholders": {
            "host": "gapless.internal (or http://gapless.internal:8080)",
            "port": "8080",
            "schema": "http",
            "password": "a token of the server's tokens file (empty: none)",
            "extra": '{"timeout": 30, "retries": 5}',
        },
    }


def get_provider_info() -> dict[str, Any]:
    from . import __version__

    def modules(*names: str) -> list[str]:
        return [f"gapless_airflow.{n}" for n in names]

    integration = "gapless"
    return {
        "package-name": "airflow-provider-gapless",
        "name": "gapless",
        "description": "Wait for exact coverage of time windows in a gapless ledger, record what tasks "
        "wrote, and import asset events that carry intervals.",
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": integration,
                "external-doc-url": "https://pypi.org/project/airflow-provider-gapless/",
                "tags": ["service"],
            }
        ],
        "hooks": [{"integration-name": integration, "python-modules": modules("hooks.gapless")}],
        "sensors": [
            {
                "integration-name": integration,
                "python-modules": modules("sensors.coverage", "sensors.asset_events"),
            }
        ],
        "triggers": [
            {"integration-name": integration, "python-modules": modules("triggers.coverage")}
        ],
        "operators": [
            {
                "integration-name": integration,
                "python-modules": modules("operators.record", "operators.sync"),
            }
        ],
        "connection-types": [
            {
                "hook-class-name": "gapless_airflow.hooks.gapless.GaplessHook",
                "connection-type": "gapless",
                "hook-name": "gapless",
                "ui-field-behaviour": ui_field_behaviour(),
            }
        ],
    }
