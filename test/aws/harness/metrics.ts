import { CloudWatchClient, GetDashboardCommand } from "@aws-sdk/client-cloudwatch";
import type { LogLine } from "./lambda";
import { awsClientConfig } from "./moto";
import type { Stack } from "./stack";

/** One metric as a dashboard graphs it or a function emits it. */
export interface MetricRef {
  namespace: string;
  name: string;
  dimensions: Record<string, string>;
}

interface Widget {
  type: string;
  properties: { title?: string; metrics?: unknown[][] };
}

/** The stage's dashboard as deployed (moto's CloudFormation models AWS::CloudWatch::Dashboard). */
export async function deployedDashboard(stack: Stack): Promise<{ widgets: Widget[] }> {
  const client = new CloudWatchClient(awsClientConfig(stack.moto.endpoint));
  try {
    const { DashboardBody } = await client.send(
      new GetDashboardCommand({ DashboardName: stack.name }),
    );
    return JSON.parse(DashboardBody ?? "{}") as { widgets: Widget[] };
  } finally {
    client.destroy();
  }
}

/** Every metric of a dashboard's graphs, by widget title (full form: no "." shorthand). */
export function graphedMetrics(body: { widgets: Widget[] }): Map<string, MetricRef[]> {
  const byTitle = new Map<string, MetricRef[]>();
  for (const widget of body.widgets) {
    if (widget.type !== "metric") continue;
    const refs = (widget.properties.metrics ?? []).map((row) => {
      const parts = row.filter((part) => typeof part === "string") as string[];
      const [namespace = "", name = "", ...pairs] = parts;
      const dimensions: Record<string, string> = {};
      for (let i = 0; i + 1 < pairs.length; i += 2)
        dimensions[pairs[i] as string] = pairs[i + 1] as string;
      return { namespace, name, dimensions };
    });
    byTitle.set(widget.properties.title ?? "", refs);
  }
  return byTitle;
}

/** The metric an alarm of the stack watches (moto skips alarms: read from the deployed template). */
export function alarmMetric(stack: Stack, logicalId: string): MetricRef {
  const alarm = stack.template.Resources[logicalId];
  if (alarm?.Type !== "AWS::CloudWatch::Alarm") throw new Error(`${logicalId}: no such alarm`);
  const p = alarm.Properties as {
    Namespace: string;
    MetricName: string;
    Dimensions: { Name: string; Value: string }[];
  };
  return {
    namespace: p.Namespace,
    name: p.MetricName,
    dimensions: Object.fromEntries(p.Dimensions.map((d) => [d.Name, d.Value])),
  };
}

/** A metric's identity in CloudWatch: namespace, name and dimensions (units and values aside). */
export const metricKey = (m: MetricRef) =>
  JSON.stringify([m.namespace, m.name, Object.entries(m.dimensions).sort()]);

/** The metrics the functions emitted as CloudWatch embedded metric format lines (Powertools). */
export function emittedMetrics(lines: readonly LogLine[]): MetricRef[] {
  const out: MetricRef[] = [];
  for (const { line } of lines) {
    if (!line.includes('"CloudWatchMetrics"')) continue;
    const emf = JSON.parse(line) as Record<string, unknown> & {
      _aws: {
        CloudWatchMetrics: {
          Namespace: string;
          Dimensions: string[][];
          Metrics: { Name: string }[];
        }[];
      };
    };
    for (const directive of emf._aws.CloudWatchMetrics) {
      for (const set of directive.Dimensions) {
        const dimensions = Object.fromEntries(set.map((key) => [key, String(emf[key])]));
        for (const metric of directive.Metrics) {
          out.push({ namespace: directive.Namespace, name: metric.Name, dimensions });
        }
      }
    }
  }
  return out;
}
