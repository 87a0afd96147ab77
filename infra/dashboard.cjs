// The stage's CloudWatch dashboard (serverless.yml: `DashboardBody: ${file(infra/dashboard.cjs)}`):
// the framework calls this function while it resolves variables and puts the JSON text it returns
// in the template. Written as code so that each function's and each dead-letter queue's rows come
// from one list. The runs' metrics are the ones the functions emit through Powertools Metrics
// (lib/cloud: namespace `custom.metricsNamespace`, dimensions `service` and `stage`); the rest are
// AWS/Lambda and AWS/SQS metrics of the stage's own functions and queues.
"use strict";

const PERIOD = 300;
const FUNCTIONS = ["scheduler", "syncWorker", "finalize", "action"];
const DEAD_LETTER_QUEUES = ["sync-jobs-dlq", "finalize-dlq", "instance-checks-dlq"];

/** The widgets, in rows of two, for one stage. */
function dashboard({ prefix, region, namespace, service, stage, functionNames }) {
  const run = (name, options) => [namespace, name, "service", service, "stage", stage, options];
  const graph = (title, metrics, extra = {}) => ({
    type: "metric",
    properties: { title, region, period: PERIOD, view: "timeSeries", metrics, ...extra },
  });
  const perFunction = (title, metricName, stat) =>
    graph(
      title,
      FUNCTIONS.map((key) => [
        "AWS/Lambda",
        metricName,
        "FunctionName",
        functionNames[key],
        { stat, label: key },
      ]),
    );
  const sum = (label, extra = {}) => ({ stat: "Sum", label, ...extra });
  const widgets = [
    {
      type: "text",
      properties: {
        markdown: [
          `# ${prefix}`,
          `A run's history: \`access-connectors cloud runs <connectorId> --stage ${stage}\`.`,
          `Alarms: \`${prefix}-runs-failed\`, \`${prefix}-runs-held\` and the dead-letter queues'.`,
        ].join("\n"),
      },
    },
    graph("Runs by outcome", [
      run("runsCompleted", sum("complete")),
      run("runsFailed", sum("error")),
      run("runsHeld", sum("held")),
      run("runsReleased", sum("released")),
    ]),
    graph("Run duration (complete runs, ms)", [
      run("runDuration", { stat: "Average", label: "average" }),
      run("runDuration", { stat: "Maximum", label: "longest" }),
    ]),
    graph("Jobs", [
      run("jobs", sum("jobs done")),
      run("throttles", sum("sent back with a delay (429, shared rate)")),
      run("records", sum("records", { yAxis: "right" })),
    ]),
    graph("Upstream requests and 429s", [
      run("requests", sum("requests")),
      run("retries", sum("retries")),
      run("upstream429s", sum("429 answers", { yAxis: "right" })),
    ]),
    graph(
      "Dead-letter queues (messages)",
      DEAD_LETTER_QUEUES.map((queue) => [
        "AWS/SQS",
        "ApproximateNumberOfMessagesVisible",
        "QueueName",
        `${prefix}-${queue}`,
        { stat: "Maximum", label: queue },
      ]),
    ),
    perFunction("Function errors", "Errors", "Sum"),
    perFunction("Function throttles", "Throttles", "Sum"),
    perFunction("Function duration (longest, ms)", "Duration", "Maximum"),
  ];
  // The text across the top, then two graphs a row.
  return {
    widgets: widgets.map((widget, i) =>
      i === 0
        ? { ...widget, x: 0, y: 0, width: 24, height: 2 }
        : {
            ...widget,
            x: ((i - 1) % 2) * 12,
            y: 2 + Math.floor((i - 1) / 2) * 6,
            width: 12,
            height: 6,
          },
    ),
  };
}

module.exports = async ({ resolveVariable }) => {
  const [prefix, region, namespace, service, stage, functionNames] = await Promise.all([
    resolveVariable("self:custom.prefix"),
    resolveVariable("self:provider.region"),
    resolveVariable("self:custom.metricsNamespace"),
    resolveVariable("self:service"),
    resolveVariable("sls:stage"),
    resolveVariable("self:custom.functionNames"),
  ]);
  return JSON.stringify(dashboard({ prefix, region, namespace, service, stage, functionNames }));
};
