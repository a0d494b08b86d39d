"""Alerts in the team's own words: a channel's `template:` renders the text a Slack channel
and a webhook receive for a real DOWN and its recovery; a template naming a variable that
does not exist is refused at load with its file:line:col; `notify-test` shows the text."""
import subprocess

from conftest import BINARY, wait_for
from test_alerts import receiver  # noqa: F401 (a fixture)

TEMPLATE = "{{state}}: {{monitor}} ({{cause}}){{#incident_id}} #{{incident_id}}{{/incident_id}}{{#url}} {{url}}{{/url}}"


def config(receiver, port):
    return f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
  public_url: https://tw.example.org
notifications:
  - name: team
    type: slack
    webhook_url: "{receiver.base}/slack/T000/B000/XXXX"
    default: true
    template: "{TEMPLATE}"
  - name: hook
    type: webhook
    url: "{receiver.base}/hook"
    default: true
    template: "{{{{monitor}}}} is {{{{state}}}} after {{{{duration}}}}"
monitors:
  - name: inference
    type: http
    url: http://127.0.0.1:{port}/health
    interval: 200ms
    timeout: 1s
    conditions: ["[STATUS] == 200"]
"""


def test_a_down_reads_as_the_template_says(start_server, health_target, receiver):
    server = start_server(config(receiver, health_target.port))
    server.wait_status("inference", "up")
    health_target.degrade()
    server.wait_status("inference", "down")
    slack = wait_for(lambda: receiver.accepted("/slack/T000/B000/XXXX"), what="the DOWN on Slack")[0]
    _, incidents, _ = server.get("/api/v1/incidents?monitor=inference")
    incident = incidents["incidents"][0]["id"]
    assert slack["body"] == {"text": f"down: inference (HTTP 503) #{incident} https://tw.example.org/monitors/inference"}
    hook = wait_for(lambda: receiver.accepted("/hook"), what="the DOWN on the webhook")[0]
    assert hook["body"]["text"].startswith("inference is down after ")
    assert hook["body"]["event"] == "down", "the webhook's structured event is still there beside the text"

    health_target.recover()
    server.wait_status("inference", "up")
    up = wait_for(lambda: receiver.accepted("/slack/T000/B000/XXXX")[1:], what="the recovery on Slack")[0]
    assert up["body"]["text"].startswith(f"up: inference (HTTP 503) #{incident}"), up["body"]

    cli = subprocess.run([BINARY, "notify-test", "--config", str(server.config_path), "team"],
                         capture_output=True, text=True, timeout=30)
    assert cli.returncode == 0, cli.stderr
    assert "team (template): test: team" in cli.stdout, cli.stdout


def test_a_template_naming_no_variable_is_refused_with_its_position(tmp_path, receiver):
    path = tmp_path / "trainwatch.yaml"
    path.write_text(config(receiver, 9).replace("{{cause}}", "{{nosuch}}"))
    result = subprocess.run([BINARY, "check", str(path)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert f"{path}:10:15: notifications.team.template: {{{{nosuch}}}} at character 25 is not a variable" \
        in result.stderr, result.stderr
