const token = "{{TOKEN:10}}";
