// A typed client of the course API, made from /openapi.json by openapi-typescript
// (default options) and openapi-fetch: it creates a course with the minimal body,
// reads, changes and deletes it, and prints what it saw as one JSON line.
// tests/e2e/test_openapi_tools.py generates ./api.d.ts, compiles this file with
// `tsc --strict` and runs it with API_BASE_URL and API_TOKEN set.
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

declare const process: { env: Record<string, string | undefined>; exitCode?: number };

type CourseCreate = components["schemas"]["CourseCreate"];
type Course = components["schemas"]["Course"];
type ApiError = components["schemas"]["Error"];

// The minimal body: every other field has a default.
const slug = process.env.COURSE_SLUG ?? "typed-client-course";
const minimal: CourseCreate = { title: "Typed client course", slug };

// What the types must refuse (tsc fails on an unused @ts-expect-error):
// @ts-expect-error slug is required
const noSlug: CourseCreate = { title: "No slug" };
// @ts-expect-error an amount is an integer of minor units, not a decimal string
const textPrice: CourseCreate = { title: "Priced", slug: "priced", price: "49.00" };
// @ts-expect-error the server sets id
const withId: CourseCreate = { title: "With id", slug: "with-id", id: "x" };
void noSlug, textPrice, withId;
export function rename(course: Course): void {
  // @ts-expect-error server-set fields are read-only
  course.id = "another";
}

function expect(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

async function main(): Promise<void> {
  const baseUrl = process.env.API_BASE_URL;
  const token = process.env.API_TOKEN;
  expect(baseUrl !== undefined && token !== undefined, "set API_BASE_URL and API_TOKEN");
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });

  const created = await api.POST("/api/v1/courses", { body: minimal });
  expect(created.data !== undefined, `create: ${created.response.status} ${JSON.stringify(created.error)}`);
  const course: Course = created.data;
  const item_id = course.id;

  const read = await api.GET("/api/v1/courses/{item_id}", { params: { path: { item_id } } });
  expect(read.data !== undefined, `read: ${read.response.status}`);

  const updated = await api.PATCH("/api/v1/courses/{item_id}", {
    params: { path: { item_id } },
    body: { price: 4900, currency: "EUR", level: "intermediate" },
  });
  expect(updated.data !== undefined, `update: ${updated.response.status} ${JSON.stringify(updated.error)}`);

  const deleted = await api.DELETE("/api/v1/courses/{item_id}", { params: { path: { item_id } } });
  const gone = await api.GET("/api/v1/courses/{item_id}", { params: { path: { item_id } } });
  const goneError: ApiError | undefined = gone.error;

  console.log(JSON.stringify({
    created: { status: created.response.status, course },
    read: { status: read.response.status, course: read.data },
    updated: { status: updated.response.status, course: updated.data },
    deleted: { status: deleted.response.status },
    gone: { status: gone.response.status, error: goneError?.error ?? null },
  }));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
