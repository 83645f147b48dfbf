"""Demo content for a new school, so that a newcomer sees something real in every area.

`seed_demo` fills an empty school with a small online course school: lecturers,
courses and their curricula, students enrolled over the last 90 days, members and
their subscriptions, orders (some with a coupon), events, posts, digital products,
comments, forms, pages and the school-wide settings. The content is fixed; the ids
come from the store and the dates are placed relative to `now`.

Every document goes through the area's model and rules exactly as a write through
the API does, so the demo can never hold what the API would refuse.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import asyncpg

from .areas.registry import BY_NAME, validate_document
from .items import PgItemStore

_HAS_ITEMS = "SELECT EXISTS (SELECT 1 FROM api_items WHERE school_id = $1)"

# the area holding each kind of product an order item may name
PRODUCT_AREAS = {
    "course": "courses", "digital_product": "digital_products", "membership_plan": "membership_plans",
    "event": "events",
}

# -- the content ---------------------------------------------------------------------
# Other documents are named by their slug (code, email); offsets are in days from `now`
# (negative: in the past).

LECTURERS = (
    {"name": "Ana Novak", "slug": "ana-novak", "email": "ana.novak@example.com",
     "bio": "Software engineer turned teacher. Ana has taught Python to more than 3,000 beginners.",
     "photo_url": "https://images.example.com/lecturers/ana-novak.jpg", "published": True},
    {"name": "Marco Bianchi", "slug": "marco-bianchi", "email": "marco.bianchi@example.com",
     "bio": "Painter and portrait photographer based in Bologna, exhibiting since 2009.",
     "photo_url": "https://images.example.com/lecturers/marco-bianchi.jpg", "published": True},
    {"name": "Priya Raman", "slug": "priya-raman", "email": "priya.raman@example.com",
     "bio": "Data scientist who builds forecasting models by day and teaches them by night.",
     "photo_url": "https://images.example.com/lecturers/priya-raman.jpg", "published": True},
)

COURSES = (  # lecturer_ids name lecturers by slug
    {"title": "Python for Beginners", "slug": "python-for-beginners", "price": 4900, "level": "beginner",
     "description": "Learn to write real programs from your very first line of code.",
     "lecturer_ids": ["ana-novak"], "published": True},
    {"title": "Data Analysis with Pandas", "slug": "data-analysis-with-pandas", "price": 7900,
     "level": "intermediate", "description": "Clean, reshape and chart real data sets with pandas.",
     "lecturer_ids": ["ana-novak", "priya-raman"], "published": True},
    {"title": "Watercolour Basics", "slug": "watercolour-basics", "price": 2900, "level": "beginner",
     "description": "Washes, layering and colour mixing, one small painting at a time.",
     "lecturer_ids": ["marco-bianchi"], "published": True},
    {"title": "Portrait Photography", "slug": "portrait-photography", "price": 5900, "level": "intermediate",
     "description": "Light, pose and edit flattering portraits with any camera.",
     "lecturer_ids": ["marco-bianchi"], "published": True},
    {"title": "Machine Learning in Practice", "slug": "machine-learning-in-practice", "price": 12900,
     "level": "advanced", "description": "From a notebook experiment to a model you can trust in production.",
     "lecturer_ids": ["priya-raman"], "published": False},
    {"title": "Figure Drawing Masterclass", "slug": "figure-drawing-masterclass", "price": 9900,
     "level": "advanced", "description": "Gesture, proportion and anatomy for confident figure drawing.",
     "lecturer_ids": ["marco-bianchi"], "published": False},
)

# course slug -> sections of (section title, lessons of (title, kind, minutes[, free preview]))
CURRICULA: dict[str, tuple[tuple[str, tuple[tuple[Any, ...], ...]], ...]] = {
    "python-for-beginners": (
        ("Getting started", (("Welcome to the course", "video", 4, True), ("Installing Python", "text", 10, True))),
        ("The core language", (("Variables and types", "video", 14), ("Making decisions", "video", 12),
                               ("Loops", "video", 15), ("Check your understanding", "quiz", 10))),
        ("Your first project", (("Building a to-do app", "video", 25), ("Project: a quiz game", "assignment", 60))),
    ),
    "data-analysis-with-pandas": (
        ("Foundations", (("Why pandas?", "video", 6, True), ("Series and DataFrames", "video", 18))),
        ("Cleaning data", (("Missing values", "video", 16), ("Reshaping and merging", "video", 22),
                           ("Cleaning quiz", "quiz", 10))),
        ("Telling the story", (("Charts that explain", "video", 20), ("Project: city bike trips", "assignment", 90))),
    ),
    "watercolour-basics": (
        ("Materials", (("Paper, paint and brushes", "video", 8, True), ("Setting up your palette", "text", 5))),
        ("Techniques", (("Flat and graded washes", "video", 14), ("Wet on wet", "video", 12),
                        ("Exercise: a sunset sky", "assignment", 45))),
    ),
    "portrait-photography": (
        ("Light", (("Reading natural light", "video", 12, True), ("One-light studio setups", "video", 18))),
        ("Posing and directing", (("Putting people at ease", "video", 10), ("Flattering angles", "video", 14))),
        ("Editing", (("A portrait editing workflow", "video", 24), ("Assignment: window-light portrait",
                                                                     "assignment", 60))),
    ),
    "machine-learning-in-practice": (
        ("Framing the problem", (("What are we predicting?", "video", 10, True), ("Baselines first", "text", 8))),
        ("Models", (("Gradient boosting", "video", 26), ("Validation done right", "video", 20),
                    ("Model quiz", "quiz", 15))),
    ),
    "figure-drawing-masterclass": (
        ("Gesture", (("Thirty-second poses", "video", 12, True), ("Line of action", "video", 10))),
        ("Structure", (("Proportion", "video", 16), ("Anatomy for artists", "text", 20),
                       ("Assignment: a long pose", "assignment", 120))),
    ),
}

MEMBERSHIP_PLANS = (
    {"name": "Community Monthly", "slug": "community-monthly", "price": 1500, "interval": "month",
     "description": "Live sessions, the members' forum and a new workshop every month.", "published": True},
    {"name": "All-Access Annual", "slug": "all-access-annual", "price": 14900, "interval": "year",
     "description": "Every course, every workshop and the community, billed once a year.", "published": True},
    {"name": "Studio Pro", "slug": "studio-pro", "price": 2900, "interval": "month",
     "description": "Monthly one-to-one feedback on your work (coming soon).", "published": False},
)

# (name, email, plan slug, member status, joined offset, subscription status or None)
MEMBERS = (
    ("Ben Carter", "ben.carter@example.com", "community-monthly", "active", -10, "active"),
    ("Lena Fischer", "lena.fischer@example.com", "all-access-annual", "active", -84, "active"),
    ("Ravi Patel", "ravi.patel@example.com", "community-monthly", "active", -3, "trialing"),
    ("Julia Costa", "julia.costa@example.com", "community-monthly", "paused", -61, "past_due"),
    ("Sam O'Brien", "sam.obrien@example.com", "all-access-annual", "cancelled", -150, "cancelled"),
    ("Emma Laurent", "emma.laurent@example.com", None, "active", -58, None),
)
PLAN_DAYS = {"month": 30, "year": 365}
CANCELLED_OFFSET = -7

# (name, email, enrollments of (course slug, enrolled offset, progress percent))
STUDENTS = (
    ("Lena Fischer", "lena.fischer@example.com",
     (("python-for-beginners", -86, 100), ("data-analysis-with-pandas", -40, 55))),
    ("Tom Berger", "tom.berger@example.com", (("watercolour-basics", -81, 90),)),
    ("Sofia Rossi", "sofia.rossi@example.com",
     (("python-for-beginners", -75, 80), ("portrait-photography", -12, 10))),
    ("Jonas Weber", "jonas.weber@example.com", (("data-analysis-with-pandas", -68, 35),)),
    ("Emma Laurent", "emma.laurent@example.com",
     (("watercolour-basics", -60, 100), ("portrait-photography", -30, 60))),
    ("Lucas Martin", "lucas.martin@example.com", (("python-for-beginners", -52, 45),)),
    ("Mia Kowalski", "mia.kowalski@example.com", (("portrait-photography", -47, 70),)),
    ("Noah Jensen", "noah.jensen@example.com",
     (("python-for-beginners", -33, 20), ("data-analysis-with-pandas", -9, 5))),
    ("Chloé Dubois", "chloe.dubois@example.com", (("watercolour-basics", -24, 40),)),
    ("Elias Horvat", "elias.horvat@example.com", (("data-analysis-with-pandas", -18, 15),)),
    ("Hannah Schmid", "hannah.schmid@example.com", (("python-for-beginners", -6, 10),)),
    ("Oliver Smith", "oliver.smith@example.com",
     (("portrait-photography", -2, 0), ("watercolour-basics", -2, 0))),
)

COUPONS = (  # valid_from / valid_until are offsets
    {"code": "WELCOME10", "discount_type": "percent", "amount": 10, "valid_from": -120, "max_redemptions": 500},
    {"code": "SPRING20", "discount_type": "fixed", "amount": 2000, "currency": "EUR", "valid_from": -60,
     "valid_until": 30, "max_redemptions": 100},
    {"code": "SUMMER25", "discount_type": "percent", "amount": 25, "valid_from": -400, "valid_until": -300,
     "active": False},
)

DIGITAL_PRODUCTS = (
    {"title": "Python Cheat Sheet", "slug": "python-cheat-sheet", "price": 900,
     "description": "Every everyday Python idiom on two printable pages.",
     "file_url": "https://files.example.com/demo/python-cheat-sheet.pdf", "published": True},
    {"title": "Watercolour Palette Guide", "slug": "watercolour-palette-guide", "price": 1500,
     "description": "Forty tested colour mixes with swatches and pigment notes.",
     "file_url": "https://files.example.com/demo/watercolour-palette-guide.pdf", "published": True},
    {"title": "Portrait Lightroom Presets", "slug": "portrait-lightroom-presets", "price": 2400,
     "description": "Twelve presets for natural, warm and moody portraits.",
     "file_url": "https://files.example.com/demo/portrait-lightroom-presets.zip", "published": True},
)

# (customer email, products of (product type, slug), placed offset, status, coupon code)
ORDERS = (
    ("lena.fischer@example.com", (("course", "python-for-beginners"),), -86, "paid", None),
    ("tom.berger@example.com", (("course", "watercolour-basics"),), -81, "paid", None),
    ("sofia.rossi@example.com", (("course", "python-for-beginners"),), -75, "paid", "WELCOME10"),
    ("jonas.weber@example.com", (("course", "data-analysis-with-pandas"),), -68, "paid", None),
    ("emma.laurent@example.com",
     (("course", "watercolour-basics"), ("digital_product", "watercolour-palette-guide")), -60, "paid", None),
    ("lucas.martin@example.com", (("course", "python-for-beginners"),), -52, "paid", None),
    ("mia.kowalski@example.com", (("course", "portrait-photography"),), -47, "paid", None),
    ("lena.fischer@example.com", (("course", "data-analysis-with-pandas"),), -40, "paid", None),
    ("noah.jensen@example.com",
     (("course", "python-for-beginners"), ("digital_product", "python-cheat-sheet")), -33, "paid", None),
    ("emma.laurent@example.com", (("course", "portrait-photography"),), -30, "paid", "WELCOME10"),
    ("chloe.dubois@example.com", (("course", "watercolour-basics"),), -24, "paid", None),
    ("tom.berger@example.com", (("digital_product", "portrait-lightroom-presets"),), -20, "refunded", None),
    ("elias.horvat@example.com", (("course", "data-analysis-with-pandas"),), -18, "paid", None),
    ("sofia.rossi@example.com", (("course", "portrait-photography"),), -12, "paid", "SPRING20"),
    ("ben.carter@example.com", (("membership_plan", "community-monthly"),), -10, "paid", None),
    ("hannah.schmid@example.com", (("course", "python-for-beginners"),), -6, "paid", None),
    ("oliver.smith@example.com",
     (("course", "portrait-photography"), ("course", "watercolour-basics")), -2, "paid", None),
    ("jonas.weber@example.com", (("digital_product", "portrait-lightroom-presets"),), -1, "pending", None),
)
ORDER_NUMBER_FIRST = 1001

EVENTS = (  # starts_at is an offset; the event lasts `minutes`
    {"title": "Live Q&A: Python Basics", "slug": "live-qa-python-basics", "starts_at": -20, "minutes": 60,
     "description": "Bring your questions about the first three sections.",
     "online_url": "https://meet.example.com/demo-python-qa", "capacity": 100, "published": True},
    {"title": "Watercolour Sketch Walk", "slug": "watercolour-sketch-walk", "starts_at": -45, "minutes": 180,
     "description": "Paint the old town together, materials provided.", "location": "Old Town Square, Bologna",
     "capacity": 15, "published": True},
    {"title": "Portrait Lighting Workshop", "slug": "portrait-lighting-workshop", "starts_at": 14, "minutes": 240,
     "description": "Hands-on studio session with two models and three lighting setups.",
     "location": "Studio 4, Via Roma 12, Bologna", "capacity": 12, "published": True},
    {"title": "Data Careers Panel", "slug": "data-careers-panel", "starts_at": 30, "minutes": 90,
     "description": "Three working data scientists on how they got their first job.",
     "online_url": "https://meet.example.com/demo-data-careers", "capacity": 300, "published": False},
)

POSTS = (  # author_id names a lecturer by slug; published_at is an offset
    {"title": "Welcome to Demo Course School", "slug": "welcome", "author_id": "priya-raman", "published_at": -88,
     "excerpt": "Who we are and what you can learn here.",
     "body": "We started this school to teach practical skills in small, friendly classes. Have a look around!"},
    {"title": "Five Python habits worth building early", "slug": "five-python-habits", "author_id": "ana-novak",
     "published_at": -55, "excerpt": "Small habits that make your code easier to read and to fix.",
     "body": "Name things well, write small functions, read error messages slowly, test early, and commit often."},
    {"title": "Choosing your first watercolour paper", "slug": "choosing-watercolour-paper",
     "author_id": "marco-bianchi", "published_at": -29, "excerpt": "Cotton, cellulose, hot or cold pressed?",
     "body": "Paper matters more than paint. Start with 300 g/m² cold-pressed cotton paper and you will see why."},
    {"title": "What our students built this spring", "slug": "student-projects-spring", "author_id": "priya-raman",
     "published_at": -8, "excerpt": "Quiz games, bike-trip dashboards and a lot of sunsets.",
     "body": "Every term we are amazed by the projects. Here are a few of our favourites, shared with permission."},
    {"title": "Coming soon: Machine Learning in Practice", "slug": "coming-soon-machine-learning",
     "author_id": "priya-raman", "published_at": None, "excerpt": "Our first advanced data course.",
     "body": "Draft: announce the course once the last module is recorded."},
)

# (target type, target slug, author name, body, approved)
COMMENTS = (
    ("course", "python-for-beginners", "Lena Fischer", "Clear, patient and fun. I finally understand loops!", True),
    ("course", "python-for-beginners", "Lucas Martin", "The quiz game project was the best part.", True),
    ("course", "data-analysis-with-pandas", "Jonas Weber", "Great examples with real data.", True),
    ("course", "watercolour-basics", "Tom Berger", "My sunsets look like sunsets now. Thank you Marco!", True),
    ("course", "portrait-photography", "Mia Kowalski", "Could you add a lesson on shooting outdoors?", False),
    ("post", "five-python-habits", "Noah Jensen", "Reading error messages slowly is underrated.", True),
    ("post", "choosing-watercolour-paper", "Chloé Dubois", "Which brand do you use in the course?", True),
    ("post", "welcome", "Sofia Rossi", "Happy to be here!", False),
)

FORMS = (
    {"title": "Contact us", "submission_count": 23, "fields": [
        {"name": "name", "label": "Your name", "type": "text", "required": True},
        {"name": "email", "label": "Email address", "type": "email", "required": True},
        {"name": "message", "label": "Message", "type": "textarea", "required": True},
    ]},
    {"title": "Course waiting list", "submission_count": 41, "fields": [
        {"name": "email", "label": "Email address", "type": "email", "required": True},
        {"name": "course", "label": "Which course are you waiting for?", "type": "select", "required": True},
        {"name": "newsletter", "label": "Also send me the monthly newsletter", "type": "checkbox"},
    ]},
)

PAGES = (
    {"title": "About us", "slug": "about", "published": True,
     "body": "Demo Course School teaches programming, data and visual arts in small online classes."},
    {"title": "Contact", "slug": "contact", "published": True,
     "body": "Write to hello@demo-course-school.example or use the contact form; we answer within two days."},
    {"title": "Terms of service", "slug": "terms", "published": True,
     "body": "By buying a course you get lifetime access to it for personal use. Refunds within 14 days."},
    {"title": "Privacy policy", "slug": "privacy", "published": True,
     "body": "We keep only the data needed to run your courses and never sell it to anyone."},
)

SCHOOL = {
    "name": "Demo Course School", "description": "Practical online courses in programming, data and visual arts.",
    "contact_email": "hello@demo-course-school.example", "timezone": "Europe/Rome", "locale": "en", "currency": "EUR",
}
APPEARANCE = {"theme": "light", "primary_color": "#2f5bd3", "font": "sans"}
ACCOUNT = {"display_name": "School owner", "bio": "I run Demo Course School.", "locale": "en",
           "email_notifications": True}


# -- seeding -------------------------------------------------------------------------


class _Seeder:
    """Creates validated documents and remembers them by area and key."""

    def __init__(self, store: PgItemStore, school_id: str, now: dt.datetime) -> None:
        self.store, self.school_id, self.now = store, school_id, now
        self.made: dict[str, dict[str, dict[str, Any]]] = {}

    async def add(self, area: str, key: str, data: dict[str, Any]) -> dict[str, Any]:
        spec = BY_NAME[area]
        item = await self.store.create(spec, self.school_id, validate_document(spec, data))
        self.made.setdefault(area, {})[key] = item
        return item

    def id(self, area: str, key: str) -> str:
        return self.made[area][key]["id"]

    def at(self, days: float | None) -> dt.datetime | None:
        return None if days is None else self.now + dt.timedelta(days=days)

    def order_item(self, product_type: str, key: str) -> dict[str, Any]:
        product = self.made[PRODUCT_AREAS[product_type]][key]
        return {"product_type": product_type, "product_id": product["id"],
                "title": product.get("title") or product["name"], "quantity": 1,
                "unit_price": product.get("price", 0)}

    def discount(self, code: str | None, subtotal: int) -> int:
        if code is None:
            return 0
        coupon = self.made["coupons"][code]
        if coupon["discount_type"] == "percent":
            return subtotal * min(coupon["amount"], 100) // 100
        return min(coupon["amount"], subtotal)


async def seed_demo(
    pool: asyncpg.Pool, *, school_id: str, slug: str, owner_id: str | None = None, now: dt.datetime | None = None
) -> bool:
    """Fill the school with the demo content; False (and nothing changed beyond
    recording the school) when it already holds items."""
    now = now or dt.datetime.now(dt.UTC)
    if now.tzinfo is None:
        raise ValueError("now must carry a time zone")
    async with pool.acquire() as conn, conn.transaction():
        # One seeding per school at a time, all or nothing.
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"seed:{school_id}")
        store = PgItemStore(conn)
        await store.upsert_school(school_id, slug)
        if await conn.fetchval(_HAS_ITEMS, uuid.UUID(school_id)):
            return False
        await _fill(_Seeder(store, school_id, now), store, school_id, owner_id)
    return True


async def _fill(s: _Seeder, store: PgItemStore, school_id: str, owner_id: str | None) -> None:

    for lecturer in LECTURERS:
        await s.add("lecturers", lecturer["slug"], lecturer)
    for course in COURSES:
        await s.add("courses", course["slug"],
                    {**course, "lecturer_ids": [s.id("lecturers", k) for k in course["lecturer_ids"]]})
    for course_slug, sections in CURRICULA.items():
        await s.add("curriculum", course_slug, {"course_id": s.id("courses", course_slug), "sections": [
            {"title": title, "lessons": [dict(zip(("title", "kind", "duration_minutes", "free_preview"), lesson))
                                         for lesson in lessons]}
            for title, lessons in sections
        ]})
    for plan in MEMBERSHIP_PLANS:
        await s.add("membership_plans", plan["slug"], plan)
    for name, email, plan_slug, status, joined, _ in MEMBERS:
        await s.add("members", email, {"name": name, "email": email, "status": status, "joined_at": s.at(joined),
                                       "plan_id": s.id("membership_plans", plan_slug) if plan_slug else None})
    for _, email, plan_slug, _, joined, status in MEMBERS:
        if status is None:
            continue
        plan = s.made["membership_plans"][plan_slug]
        period = PLAN_DAYS[plan["interval"]]
        cycles = -joined // period + 1  # the first renewal still ahead of now
        await s.add("subscriptions", email, {
            "member_id": s.id("members", email), "plan_id": plan["id"], "status": status,
            "started_at": s.at(joined),
            "renews_at": None if status == "cancelled" else s.at(joined + cycles * period),
            "cancelled_at": s.at(CANCELLED_OFFSET) if status == "cancelled" else None,
        })
    for name, email, enrollments in STUDENTS:
        await s.add("students", email, {"name": name, "email": email, "enrollments": [
            {"course_id": s.id("courses", course), "enrolled_at": s.at(days), "progress_percent": progress}
            for course, days, progress in enrollments
        ]})
    for coupon in COUPONS:
        await s.add("coupons", coupon["code"], {**coupon, "valid_from": s.at(coupon.get("valid_from")),
                                                "valid_until": s.at(coupon.get("valid_until"))})
    for product in DIGITAL_PRODUCTS:
        await s.add("digital_products", product["slug"], product)
    for event in EVENTS:
        fields = {k: v for k, v in event.items() if k != "minutes"}
        starts = s.at(event["starts_at"])
        await s.add("events", event["slug"],
                    {**fields, "starts_at": starts, "ends_at": starts + dt.timedelta(minutes=event["minutes"])})
    for post in POSTS:
        await s.add("posts", post["slug"], {
            **post, "author_id": s.id("lecturers", post["author_id"]), "published_at": s.at(post["published_at"]),
            "published": post["published_at"] is not None,
        })
    for number, (email, products, placed, status, code) in enumerate(ORDERS, start=ORDER_NUMBER_FIRST):
        items = [s.order_item(kind, key) for kind, key in products]
        subtotal = sum(i["quantity"] * i["unit_price"] for i in items)
        discount = s.discount(code, subtotal)
        await s.add("orders", str(number), {
            "number": f"DEMO-{number}", "customer_email": email, "items": items, "subtotal": subtotal,
            "discount": discount, "total": subtotal - discount, "currency": "EUR", "coupon_code": code,
            "status": status, "placed_at": s.at(placed),
        })
    for i, (target_type, target, author, body, approved) in enumerate(COMMENTS):
        target_area = "courses" if target_type == "course" else "posts"
        await s.add("comments", str(i), {"target_type": target_type, "target_id": s.id(target_area, target),
                                         "author_name": author, "body": body, "approved": approved})
    for form in FORMS:
        await s.add("forms", form["title"], form)
    for page in PAGES:
        await s.add("pages", page["slug"], page)

    singletons = [("school", "", SCHOOL), ("appearance", "", APPEARANCE)]
    if owner_id is not None:
        singletons.append(("account", owner_id, ACCOUNT))
    for area, owner, data in singletons:
        spec = BY_NAME[area]
        if await store.get_singleton(spec, school_id, owner) is None:  # settings made by hand stay
            await store.put_singleton(spec, school_id, owner, validate_document(spec, data))
