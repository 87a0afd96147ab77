import { CloudFormationClient, DescribeStacksCommand } from "@aws-sdk/client-cloudformation";
import { ConnectorError, messageOf } from "../../errors";

/** The stack outputs the operator commands read (serverless.yml, infra/outputs.yml). */
export interface StackOutputs {
  stackName: string;
  instancesTable: string;
  runsTable: string;
  secretsPrefix: string;
  schedulerFunctionName: string;
  actionFunctionName: string;
}

const REQUIRED = {
  instancesTable: "InstancesTableName",
  runsTable: "RunsTableName",
  secretsPrefix: "SecretsPrefix",
  schedulerFunctionName: "SchedulerFunctionName",
  actionFunctionName: "ActionFunctionName",
} as const;

export function stackName(stage: string): string {
  return `access-connectors-${stage}`;
}

/** Reads the stage's stack outputs; a missing stack or output says how to deploy. */
export async function readStackOutputs(stage: string, region?: string): Promise<StackOutputs> {
  const name = stackName(stage);
  const client = new CloudFormationClient(region ? { region } : {});
  let outputs: Record<string, string>;
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: name }));
    outputs = Object.fromEntries(
      (Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? "", o.OutputValue ?? ""]),
    );
  } catch (error) {
    const reason = messageOf(error);
    throw new ConnectorError(
      `cannot read the stack ${name} (${reason}); deploy it with \`npx serverless deploy --stage ${stage}\`, or pass the --stage and --region it was deployed with`,
    );
  }
  const missing = Object.values(REQUIRED).filter((key) => !outputs[key]);
  if (missing.length > 0) {
    throw new ConnectorError(
      `the stack ${name} lacks the outputs ${missing.join(", ")}; deploy this version with \`npx serverless deploy --stage ${stage}\``,
    );
  }
  return {
    stackName: name,
    instancesTable: outputs[REQUIRED.instancesTable] as string,
    runsTable: outputs[REQUIRED.runsTable] as string,
    secretsPrefix: outputs[REQUIRED.secretsPrefix] as string,
    schedulerFunctionName: outputs[REQUIRED.schedulerFunctionName] as string,
    actionFunctionName: outputs[REQUIRED.actionFunctionName] as string,
  };
}
