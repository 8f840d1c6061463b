// Scripts and reads the fake LLM server (test/support/fake-llm.ts) from inside workerd.
import { env } from 'cloudflare:workers';
import type { FakeResponse, RecordedRequest } from '../../../support/fake-llm';

export async function script(id: string, responses: FakeResponse[], delayMs = 0): Promise<void> {
  const res = await fetch(`${env.FAKE_LLM_URL}/__scenario/${id}`, {
    method: 'POST',
    body: JSON.stringify({ responses, delayMs }),
  });
  if (!res.ok) throw new Error(`scripting ${id} failed: ${res.status}`);
}

export async function recorded(id: string): Promise<RecordedRequest[]> {
  const res = await fetch(`${env.FAKE_LLM_URL}/__scenario/${id}`);
  return ((await res.json()) as { requests: RecordedRequest[] }).requests;
}
