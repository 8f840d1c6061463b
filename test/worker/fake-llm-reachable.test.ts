import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

describe('the scripted fake LLM', () => {
  it('is reachable from workerd and answers a scripted scenario', async () => {
    await fetch(`${env.FAKE_LLM_URL}/__scenario/reach-1`, {
      method: 'POST',
      body: JSON.stringify({ responses: [{ status: 529, error: { type: 'overloaded_error', message: 'busy' } }] }),
    });
    const res = await fetch(`${env.FAKE_LLM_URL}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'SCENARIO:reach-1' }] }),
    });
    expect(res.status).toBe(529);
    const again = await fetch(`${env.FAKE_LLM_URL}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({
        model: 'm',
        messages: [
          {
            role: 'user',
            content:
              'SCENARIO:reach-1 <observed_from_primary_session><what_happened>Bash</what_happened><parameters>ls</parameters></observed_from_primary_session>',
          },
        ],
      }),
    });
    const body = (await again.json()) as { content: { text: string }[] };
    expect(body.content[0]!.text).toContain('<observation>');
  });
});
