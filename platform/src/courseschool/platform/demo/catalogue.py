"""The demo school's catalogue: lecturers, courses and their curricula, membership
plans, digital products and events. Fixed data; `school.py` writes it. Documents name each other
by slug; offsets are in days from `now` (negative: in the past)."""

from __future__ import annotations

from typing import Any

Rows = tuple[Any, ...]  # documents (dicts) or rows (tuples) of one kind

LECTURERS: Rows = (
    {
        "name": "Ana Novak",
        "slug": "ana-novak",
        "email": "ana.novak@example.com",
        "bio": "Software engineer turned teacher. Ana has taught Python to more than 3,000 beginners.",
        "photo_url": "https://images.example.com/lecturers/ana-novak.jpg",
        "published": True,
    },
    {
        "name": "Marco Bianchi",
        "slug": "marco-bianchi",
        "email": "marco.bianchi@example.com",
        "bio": "Painter and portrait photographer based in Bologna, exhibiting since 2009.",
        "photo_url": "https://images.example.com/lecturers/marco-bianchi.jpg",
        "published": True,
    },
    {
        "name": "Priya Raman",
        "slug": "priya-raman",
        "email": "priya.raman@example.com",
        "bio": "Data scientist who builds forecasting models by day and teaches them by night.",
        "photo_url": "https://images.example.com/lecturers/priya-raman.jpg",
        "published": True,
    },
)


COURSES: Rows = (  # lecturer_ids name lecturers by slug
    {
        "title": "Python for Beginners",
        "slug": "python-for-beginners",
        "price": 4900,
        "level": "beginner",
        "description": "Learn to write real programs from your very first line of code.",
        "lecturer_ids": ["ana-novak"],
        "published": True,
    },
    {
        "title": "Data Analysis with Pandas",
        "slug": "data-analysis-with-pandas",
        "price": 7900,
        "level": "intermediate",
        "description": "Clean, reshape and chart real data sets with pandas.",
        "lecturer_ids": ["ana-novak", "priya-raman"],
        "published": True,
    },
    {
        "title": "Watercolour Basics",
        "slug": "watercolour-basics",
        "price": 2900,
        "level": "beginner",
        "description": "Washes, layering and colour mixing, one small painting at a time.",
        "lecturer_ids": ["marco-bianchi"],
        "published": True,
    },
    {
        "title": "Portrait Photography",
        "slug": "portrait-photography",
        "price": 5900,
        "level": "intermediate",
        "description": "Light, pose and edit flattering portraits with any camera.",
        "lecturer_ids": ["marco-bianchi"],
        "published": True,
    },
    {
        "title": "Machine Learning in Practice",
        "slug": "machine-learning-in-practice",
        "price": 12900,
        "level": "advanced",
        "description": "From a notebook experiment to a model you can trust in production.",
        "lecturer_ids": ["priya-raman"],
        "published": False,
    },
    {
        "title": "Figure Drawing Masterclass",
        "slug": "figure-drawing-masterclass",
        "price": 9900,
        "level": "advanced",
        "description": "Gesture, proportion and anatomy for confident figure drawing.",
        "lecturer_ids": ["marco-bianchi"],
        "published": False,
    },
)

# course slug -> sections of (section title, lessons of (title, kind, minutes[, free preview]))


CURRICULA: dict[str, tuple[tuple[str, tuple[tuple[Any, ...], ...]], ...]] = {
    "python-for-beginners": (
        ("Getting started", (("Welcome to the course", "video", 4, True), ("Installing Python", "text", 10, True))),
        (
            "The core language",
            (
                ("Variables and types", "video", 14),
                ("Making decisions", "video", 12),
                ("Loops", "video", 15),
                ("Check your understanding", "quiz", 10),
            ),
        ),
        ("Your first project", (("Building a to-do app", "video", 25), ("Project: a quiz game", "assignment", 60))),
    ),
    "data-analysis-with-pandas": (
        ("Foundations", (("Why pandas?", "video", 6, True), ("Series and DataFrames", "video", 18))),
        (
            "Cleaning data",
            (("Missing values", "video", 16), ("Reshaping and merging", "video", 22), ("Cleaning quiz", "quiz", 10)),
        ),
        ("Telling the story", (("Charts that explain", "video", 20), ("Project: city bike trips", "assignment", 90))),
    ),
    "watercolour-basics": (
        ("Materials", (("Paper, paint and brushes", "video", 8, True), ("Setting up your palette", "text", 5))),
        (
            "Techniques",
            (
                ("Flat and graded washes", "video", 14),
                ("Wet on wet", "video", 12),
                ("Exercise: a sunset sky", "assignment", 45),
            ),
        ),
    ),
    "portrait-photography": (
        ("Light", (("Reading natural light", "video", 12, True), ("One-light studio setups", "video", 18))),
        ("Posing and directing", (("Putting people at ease", "video", 10), ("Flattering angles", "video", 14))),
        (
            "Editing",
            (("A portrait editing workflow", "video", 24), ("Assignment: window-light portrait", "assignment", 60)),
        ),
    ),
    "machine-learning-in-practice": (
        ("Framing the problem", (("What are we predicting?", "video", 10, True), ("Baselines first", "text", 8))),
        (
            "Models",
            (("Gradient boosting", "video", 26), ("Validation done right", "video", 20), ("Model quiz", "quiz", 15)),
        ),
    ),
    "figure-drawing-masterclass": (
        ("Gesture", (("Thirty-second poses", "video", 12, True), ("Line of action", "video", 10))),
        (
            "Structure",
            (
                ("Proportion", "video", 16),
                ("Anatomy for artists", "text", 20),
                ("Assignment: a long pose", "assignment", 120),
            ),
        ),
    ),
}


MEMBERSHIP_PLANS: Rows = (
    {
        "name": "Community Monthly",
        "slug": "community-monthly",
        "price": 1500,
        "interval": "month",
        "description": "Live sessions, the members' forum and a new workshop every month.",
        "published": True,
    },
    {
        "name": "All-Access Annual",
        "slug": "all-access-annual",
        "price": 14900,
        "interval": "year",
        "description": "Every course, every workshop and the community, billed once a year.",
        "published": True,
    },
    {
        "name": "Studio Pro",
        "slug": "studio-pro",
        "price": 2900,
        "interval": "month",
        "description": "Monthly one-to-one feedback on your work (coming soon).",
        "published": False,
    },
)

# (name, email, plan slug, member status, joined offset, subscription status or None)


DIGITAL_PRODUCTS: Rows = (
    {
        "title": "Python Cheat Sheet",
        "slug": "python-cheat-sheet",
        "price": 900,
        "description": "Every everyday Python idiom on two printable pages.",
        "file_url": "https://files.example.com/demo/python-cheat-sheet.pdf",
        "published": True,
    },
    {
        "title": "Watercolour Palette Guide",
        "slug": "watercolour-palette-guide",
        "price": 1500,
        "description": "Forty tested colour mixes with swatches and pigment notes.",
        "file_url": "https://files.example.com/demo/watercolour-palette-guide.pdf",
        "published": True,
    },
    {
        "title": "Portrait Lightroom Presets",
        "slug": "portrait-lightroom-presets",
        "price": 2400,
        "description": "Twelve presets for natural, warm and moody portraits.",
        "file_url": "https://files.example.com/demo/portrait-lightroom-presets.zip",
        "published": True,
    },
)

# (customer email, products of (product type, slug), placed offset, status, coupon code)


EVENTS: Rows = (  # starts_at is an offset; the event lasts `minutes`
    {
        "title": "Live Q&A: Python Basics",
        "slug": "live-qa-python-basics",
        "starts_at": -20,
        "minutes": 60,
        "description": "Bring your questions about the first three sections.",
        "online_url": "https://meet.example.com/demo-python-qa",
        "capacity": 100,
        "published": True,
    },
    {
        "title": "Watercolour Sketch Walk",
        "slug": "watercolour-sketch-walk",
        "starts_at": -45,
        "minutes": 180,
        "description": "Paint the old town together, materials provided.",
        "location": "Old Town Square, Bologna",
        "capacity": 15,
        "published": True,
    },
    {
        "title": "Portrait Lighting Workshop",
        "slug": "portrait-lighting-workshop",
        "starts_at": 14,
        "minutes": 240,
        "description": "Hands-on studio session with two models and three lighting setups.",
        "location": "Studio 4, Via Roma 12, Bologna",
        "capacity": 12,
        "published": True,
    },
    {
        "title": "Data Careers Panel",
        "slug": "data-careers-panel",
        "starts_at": 30,
        "minutes": 90,
        "description": "Three working data scientists on how they got their first job.",
        "online_url": "https://meet.example.com/demo-data-careers",
        "capacity": 300,
        "published": False,
    },
)
