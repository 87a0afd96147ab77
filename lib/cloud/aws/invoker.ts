import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { ConnectorError } from "../../errors";

/** Calls a deployed function with a JSON event and returns its JSON answer. */
export type FunctionInvoker = (functionName: string, event: unknown) => Promise<unknown>;

export function lambdaInvoker(region?: string): FunctionInvoker {
  const client = new LambdaClient(region ? { region } : {});
  return async (functionName, event) => {
    const answer = await client.send(
      new InvokeCommand({
        FunctionName: functionName,
        Payload: new TextEncoder().encode(JSON.stringify(event)),
      }),
    );
    const text = answer.Payload ? new TextDecoder().decode(answer.Payload) : "";
    const body: unknown = text ? JSON.parse(text) : undefined;
    if (answer.FunctionError) {
      const message = (body as { errorMessage?: string } | undefined)?.errorMessage ?? text;
      throw new ConnectorError(`${functionName} failed: ${message}`);
    }
    return body;
  };
}
